//go:build !amd64

package dense

// Other architectures run the plain-Go micro-kernel (path's default).
