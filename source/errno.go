package source

import "syscall"

// syscallENOTDIR is returned by lstat when a path's parent became a file.
var syscallENOTDIR error = syscall.ENOTDIR
