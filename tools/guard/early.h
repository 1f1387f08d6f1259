// The early guard's one export to Go (early.c, early_linux.go).
#ifndef HUSH_GUARD_EARLY_H
#define HUSH_GUARD_EARLY_H

// hush_early_env_fd is the memfd holding hush's original environment once
// the constructor has hidden it, and -1 otherwise. Guard reads it.
extern int hush_early_env_fd;

#endif
