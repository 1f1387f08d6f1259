//go:build !linux

package userfile

import (
	"errors"
	"os"
)

func openBeneath(root, rel string) (*os.File, error) { return nil, errNoOpenat2 }

func fdPath(f *os.File) (string, error) { return "", errors.New("no /proc") }
