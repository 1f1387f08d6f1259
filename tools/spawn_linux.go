package tools

import "syscall"

// killWithParent has the kernel SIGKILL the child when hush dies.
func killWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
