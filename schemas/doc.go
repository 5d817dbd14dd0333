// Package schemas embeds the JSON Schema files of every tool's input and
// output, named <tool>.input.json and <tool>.output.json. The toolkit
// registry compiles each once, at registration.
package schemas
