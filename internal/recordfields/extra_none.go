//go:build !recordfields_extra

package recordfields

// buildExtra is the fields a test build adds to the declaration (the
// build tag recordfields_extra, extra_probe.go): none.
var buildExtra []Field
