package toolkit

import "runtime/debug"

// build is set at link time (-ldflags "-X …/toolkit.build=<git sha>") by
// the Makefile and the Dockerfile; it goes into every evidence snapshot so
// an auditor knows which code produced an answer.
var build string

// BuildHash returns the VCS hash of this binary: the link-time value, else
// what the Go toolchain recorded, else "dev".
func BuildHash() string {
	if build != "" {
		return build
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "dev"
}
