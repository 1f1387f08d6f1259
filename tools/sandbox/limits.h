// The limits of one host tool call (limits.c), applied by the sandbox's
// set-up (sandbox.c) in the call's own namespaces.
#ifndef HUSH_LIMITS_H
#define HUSH_LIMITS_H

// hush_sb_limits applies the limits the plan's flags word carries; see
// limits.c. It runs in the PID namespace's init before the tool is
// exec'd, allocates nothing and ignores what the kernel refuses.
void hush_sb_limits(const char *flags);

#endif
