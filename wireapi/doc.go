// Package wireapi speaks the model APIs that replay serves: for each wire API one file owns
// reading a request body into the case model and rendering a recorded step as that API's
// response. The ingest side (package normalize) reads recorded request bodies with the same
// parsers, so a recorded request and a live one always canonicalize identically.
package wireapi
