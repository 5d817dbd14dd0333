package schemas

import "embed"

// FS holds every schema file of this folder.
//
//go:embed *.json
var FS embed.FS
