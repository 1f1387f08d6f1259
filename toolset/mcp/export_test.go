package mcp

// ExitNotice lets a test lengthen the wait for a broken server's exit.
var ExitNotice = &exitNotice
