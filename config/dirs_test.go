package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hushcli/hush/config"
)

func TestResolveDirs(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	const noHome = "cannot place hush's files: HOME is not set to an absolute path; set "
	tests := []struct {
		name    string
		env     map[string]string
		want    config.Dirs
		wantErr string
	}{
		{
			name: "hush vars win over XDG and HOME",
			env: map[string]string{
				"HUSH_CONFIG_DIR": "/h/cfg", "HUSH_DATA_DIR": "/h/data",
				"XDG_CONFIG_HOME": "/x/cfg", "XDG_DATA_HOME": "/x/data", "HOME": "/home/u",
			},
			want: config.Dirs{Config: "/h/cfg", Data: "/h/data"},
		},
		{
			name: "XDG vars next",
			env:  map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "XDG_DATA_HOME": "/x/data", "HOME": "/home/u"},
			want: config.Dirs{Config: "/x/cfg/hush", Data: "/x/data/hush"},
		},
		{
			name: "relative XDG paths are ignored",
			env:  map[string]string{"XDG_CONFIG_HOME": "rel/cfg", "XDG_DATA_HOME": "./data", "HOME": "/home/u"},
			want: config.Dirs{Config: "/home/u/.config/hush", Data: "/home/u/.local/share/hush"},
		},
		{
			name: "HOME fallback",
			env:  map[string]string{"HOME": "/home/u"},
			want: config.Dirs{Config: "/home/u/.config/hush", Data: "/home/u/.local/share/hush"},
		},
		{
			name: "empty values count as unset",
			env:  map[string]string{"HUSH_CONFIG_DIR": "", "HUSH_DATA_DIR": "", "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": "", "HOME": "/home/u"},
			want: config.Dirs{Config: "/home/u/.config/hush", Data: "/home/u/.local/share/hush"},
		},
		{
			name: "each dir resolves on its own",
			env:  map[string]string{"HUSH_DATA_DIR": "/h/data", "XDG_CONFIG_HOME": "/x/cfg"},
			want: config.Dirs{Config: "/x/cfg/hush", Data: "/h/data"},
		},
		{
			name: "hush vars are cleaned and made absolute",
			env:  map[string]string{"HUSH_CONFIG_DIR": "/a/../cfg/", "HUSH_DATA_DIR": "rel/data"},
			want: config.Dirs{Config: "/cfg", Data: filepath.Join(wd, "rel", "data")},
		},
		{
			name:    "nothing set",
			env:     map[string]string{},
			wantErr: noHome + "HUSH_CONFIG_DIR",
		},
		{
			name:    "nil snapshot",
			env:     nil,
			wantErr: noHome + "HUSH_CONFIG_DIR",
		},
		{
			name:    "config placed, data not",
			env:     map[string]string{"HUSH_CONFIG_DIR": "/h/cfg", "XDG_DATA_HOME": "relative"},
			wantErr: noHome + "HUSH_DATA_DIR",
		},
		{
			name:    "relative HOME would land in the working dir",
			env:     map[string]string{"HOME": "home/u"},
			wantErr: noHome + "HUSH_CONFIG_DIR",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.ResolveDirs(tt.env)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ResolveDirs = %+v, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ResolveDirs = %+v, want %+v", got, tt.want)
			}
		})
	}
}
