package userfile

import "os"

// OpenInResolved is OpenIn as it runs where the kernel has no openat2.
func OpenInResolved(root, path string) (*os.File, string, error) { return openIn(root, path, false) }
