// The .env layer's mount (envfs.c), for the sandbox's set-up (sandbox.c).
#ifndef HUSH_ENVFS_H
#define HUSH_ENVFS_H

// hush_sb_envfs_mount opens the FUSE device, mounts the .env layer at dst
// and hands the device to hush (envfs_linux.go), which serves it: arg is
// "S:DEVICE", the socket to hush and the device's path. It returns 0, or
// -1 with errno set.
int hush_sb_envfs_mount(const char *dst, const char *arg);

// hush_sb_envfs_place moves the socket to hush (or -1) to descriptor 3 of
// a child that has its own descriptor table, as the plan's "3:" says; it
// returns the first descriptor above it, or -1.
int hush_sb_envfs_place(int sock);

#endif
