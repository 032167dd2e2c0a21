#include "textflag.h"

// func tile4x8AVX2(k int, a *float64, rs, ks int, b *float64, c *float64, ldc int, alpha float64)
// c[r·ldc + j] += alpha · Σ_{p<k} a[r·rs + p·ks] · b[8p + j], r < 4, j < 8.
// Y0..Y7 hold the 4×8 sums, p in increasing order, one fused multiply-add
// per product.
TEXT ·tile4x8AVX2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R8
	SHLQ $3, R8
	MOVQ ks+24(FP), R10
	SHLQ $3, R10
	MOVQ b+32(FP), BX
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), DX
	SHLQ $3, DX
	LEAQ (R8)(R8*2), R9 // 3·rs bytes

	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

loop:
	VMOVUPD      (BX), Y8
	VMOVUPD      32(BX), Y9
	VBROADCASTSD (SI), Y10
	VBROADCASTSD (SI)(R8*1), Y11
	VBROADCASTSD (SI)(R8*2), Y12
	VBROADCASTSD (SI)(R9*1), Y13
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         R10, SI
	ADDQ         $64, BX
	DECQ         CX
	JNZ          loop

	VBROADCASTSD alpha+56(FP), Y14
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VFMADD231PD  Y0, Y14, Y8
	VFMADD231PD  Y1, Y14, Y9
	VMOVUPD      Y8, (DI)
	VMOVUPD      Y9, 32(DI)
	ADDQ         DX, DI
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VFMADD231PD  Y2, Y14, Y8
	VFMADD231PD  Y3, Y14, Y9
	VMOVUPD      Y8, (DI)
	VMOVUPD      Y9, 32(DI)
	ADDQ         DX, DI
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VFMADD231PD  Y4, Y14, Y8
	VFMADD231PD  Y5, Y14, Y9
	VMOVUPD      Y8, (DI)
	VMOVUPD      Y9, 32(DI)
	ADDQ         DX, DI
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VFMADD231PD  Y6, Y14, Y8
	VFMADD231PD  Y7, Y14, Y9
	VMOVUPD      Y8, (DI)
	VMOVUPD      Y9, 32(DI)
	VZEROUPPER
	RET

// func tile4x4SSE2(k int, a *float64, rs, ks int, b *float64, c *float64, ldc int, alpha float64)
// c[r·ldc + j] += alpha · Σ_{p<k} a[r·rs + p·ks] · b[8p + j], r < 4, j < 4:
// products and sums rounded apart, p in increasing order (as the plain-Go
// kernel). X0..X7 hold the 4×4 sums.
TEXT ·tile4x4SSE2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R8
	SHLQ $3, R8
	MOVQ ks+24(FP), R10
	SHLQ $3, R10
	MOVQ b+32(FP), BX
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), DX
	SHLQ $3, DX
	LEAQ (R8)(R8*2), R9

	XORPD X0, X0
	XORPD X1, X1
	XORPD X2, X2
	XORPD X3, X3
	XORPD X4, X4
	XORPD X5, X5
	XORPD X6, X6
	XORPD X7, X7

loopsse:
	MOVUPD   (BX), X8
	MOVUPD   16(BX), X9
	MOVSD    (SI), X10
	UNPCKLPD X10, X10
	MOVAPD   X10, X11
	MULPD    X8, X10
	MULPD    X9, X11
	ADDPD    X10, X0
	ADDPD    X11, X1
	MOVSD    (SI)(R8*1), X10
	UNPCKLPD X10, X10
	MOVAPD   X10, X11
	MULPD    X8, X10
	MULPD    X9, X11
	ADDPD    X10, X2
	ADDPD    X11, X3
	MOVSD    (SI)(R8*2), X10
	UNPCKLPD X10, X10
	MOVAPD   X10, X11
	MULPD    X8, X10
	MULPD    X9, X11
	ADDPD    X10, X4
	ADDPD    X11, X5
	MOVSD    (SI)(R9*1), X10
	UNPCKLPD X10, X10
	MOVAPD   X10, X11
	MULPD    X8, X10
	MULPD    X9, X11
	ADDPD    X10, X6
	ADDPD    X11, X7
	ADDQ     R10, SI
	ADDQ     $64, BX
	DECQ     CX
	JNZ      loopsse

	MOVSD    alpha+56(FP), X12
	UNPCKLPD X12, X12
	MULPD    X12, X0
	MULPD    X12, X1
	MULPD    X12, X2
	MULPD    X12, X3
	MULPD    X12, X4
	MULPD    X12, X5
	MULPD    X12, X6
	MULPD    X12, X7
	MOVUPD   (DI), X8
	MOVUPD   16(DI), X9
	ADDPD    X0, X8
	ADDPD    X1, X9
	MOVUPD   X8, (DI)
	MOVUPD   X9, 16(DI)
	ADDQ     DX, DI
	MOVUPD   (DI), X8
	MOVUPD   16(DI), X9
	ADDPD    X2, X8
	ADDPD    X3, X9
	MOVUPD   X8, (DI)
	MOVUPD   X9, 16(DI)
	ADDQ     DX, DI
	MOVUPD   (DI), X8
	MOVUPD   16(DI), X9
	ADDPD    X4, X8
	ADDPD    X5, X9
	MOVUPD   X8, (DI)
	MOVUPD   X9, 16(DI)
	ADDQ     DX, DI
	MOVUPD   (DI), X8
	MOVUPD   16(DI), X9
	ADDPD    X6, X8
	ADDPD    X7, X9
	MOVUPD   X8, (DI)
	MOVUPD   X9, 16(DI)
	RET
