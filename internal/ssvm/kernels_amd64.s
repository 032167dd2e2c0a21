#include "textflag.h"

// func averageSSE2(dst, w []float64, a, r float64)
// dst[j] = a·dst[j] + r·w[j], each product rounded (SSE2, no fused
// multiply-add), two elements per instruction.
TEXT ·averageSSE2(SB), NOSPLIT, $0-64
	MOVQ  dst_base+0(FP), DI
	MOVQ  dst_len+8(FP), CX
	MOVQ  w_base+24(FP), SI
	MOVSD a+48(FP), X0
	MOVSD r+56(FP), X1
	SHUFPD $0, X0, X0
	SHUFPD $0, X1, X1
	XORQ  AX, AX
	MOVQ  CX, BX
	ANDQ  $-8, BX

loop8:
	CMPQ   AX, BX
	JGE    tail
	MOVUPD (DI)(AX*8), X2
	MOVUPD 16(DI)(AX*8), X3
	MOVUPD 32(DI)(AX*8), X4
	MOVUPD 48(DI)(AX*8), X5
	MOVUPD (SI)(AX*8), X6
	MOVUPD 16(SI)(AX*8), X7
	MOVUPD 32(SI)(AX*8), X8
	MOVUPD 48(SI)(AX*8), X9
	MULPD  X0, X2
	MULPD  X0, X3
	MULPD  X0, X4
	MULPD  X0, X5
	MULPD  X1, X6
	MULPD  X1, X7
	MULPD  X1, X8
	MULPD  X1, X9
	ADDPD  X6, X2
	ADDPD  X7, X3
	ADDPD  X8, X4
	ADDPD  X9, X5
	MOVUPD X2, (DI)(AX*8)
	MOVUPD X3, 16(DI)(AX*8)
	MOVUPD X4, 32(DI)(AX*8)
	MOVUPD X5, 48(DI)(AX*8)
	ADDQ   $8, AX
	JMP    loop8

tail:
	CMPQ  AX, CX
	JGE   done
	MOVSD (DI)(AX*8), X2
	MOVSD (SI)(AX*8), X6
	MULSD X0, X2
	MULSD X1, X6
	ADDSD X6, X2
	MOVSD X2, (DI)(AX*8)
	INCQ  AX
	JMP   tail

done:
	RET


// func rows26(dst, wt []float64, idx []uint16)
// dst[k] += wt[26f+k] for k < 26, for each f of idx in turn: the sum of
// each dst[k] is taken sequentially, as the scalar loop does, with dst
// held in X0–X12 throughout.
TEXT ·rows26(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ wt_base+24(FP), SI
	MOVQ idx_base+48(FP), BX
	MOVQ idx_len+56(FP), CX
	MOVUPD 0(DI), X0
	MOVUPD 16(DI), X1
	MOVUPD 32(DI), X2
	MOVUPD 48(DI), X3
	MOVUPD 64(DI), X4
	MOVUPD 80(DI), X5
	MOVUPD 96(DI), X6
	MOVUPD 112(DI), X7
	MOVUPD 128(DI), X8
	MOVUPD 144(DI), X9
	MOVUPD 160(DI), X10
	MOVUPD 176(DI), X11
	MOVUPD 192(DI), X12
	TESTQ CX, CX
	JZ    rstore

rloop:
	MOVWQZX (BX), AX
	IMULQ   $208, AX
	ADDQ    SI, AX
	MOVUPD 0(AX), X13
	ADDPD  X13, X0
	MOVUPD 16(AX), X14
	ADDPD  X14, X1
	MOVUPD 32(AX), X15
	ADDPD  X15, X2
	MOVUPD 48(AX), X13
	ADDPD  X13, X3
	MOVUPD 64(AX), X14
	ADDPD  X14, X4
	MOVUPD 80(AX), X15
	ADDPD  X15, X5
	MOVUPD 96(AX), X13
	ADDPD  X13, X6
	MOVUPD 112(AX), X14
	ADDPD  X14, X7
	MOVUPD 128(AX), X15
	ADDPD  X15, X8
	MOVUPD 144(AX), X13
	ADDPD  X13, X9
	MOVUPD 160(AX), X14
	ADDPD  X14, X10
	MOVUPD 176(AX), X15
	ADDPD  X15, X11
	MOVUPD 192(AX), X13
	ADDPD  X13, X12
	ADDQ $2, BX
	DECQ CX
	JNZ  rloop

rstore:
	MOVUPD X0, 0(DI)
	MOVUPD X1, 16(DI)
	MOVUPD X2, 32(DI)
	MOVUPD X3, 48(DI)
	MOVUPD X4, 64(DI)
	MOVUPD X5, 80(DI)
	MOVUPD X6, 96(DI)
	MOVUPD X7, 112(DI)
	MOVUPD X8, 128(DI)
	MOVUPD X9, 144(DI)
	MOVUPD X10, 160(DI)
	MOVUPD X11, 176(DI)
	MOVUPD X12, 192(DI)
	RET

// func prefetchRange(p unsafe.Pointer, n uintptr)
// Asks for the cache lines of the n bytes at p (PREFETCHT0), without
// waiting for them.
TEXT ·prefetchRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JZ    pdone
	LEAQ  (AX)(CX*1), BX

ploop:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, BX
	JB         ploop
	PREFETCHT0 -1(BX)

pdone:
	RET

// func relaxAboveSSE2(cur []float64, bk []int, row []float64, pj float64, j int)
// For the pairs of labels below len(cur) &^ 1: where pj+row[k] > cur[k], cur[k] takes
// that sum and bk[k] takes j (branch-free: compare, then select bits).
TEXT ·relaxAboveSSE2(SB), NOSPLIT, $0-88
	MOVQ   cur_base+0(FP), DI
	MOVQ   cur_len+8(FP), CX
	MOVQ   bk_base+24(FP), DX
	MOVQ   row_base+48(FP), SI
	MOVSD  pj+72(FP), X0
	SHUFPD $0, X0, X0
	MOVQ   j+80(FP), X1
	SHUFPD $0, X1, X1
	SHRQ   $1, CX
	JZ     relaxAboveSSE2done
	XORQ   AX, AX

relaxAboveSSE2loop:
	MOVUPD (SI)(AX*1), X2
	ADDPD  X0, X2
	MOVUPD (DI)(AX*1), X3
	MOVAPD X3, X4
	CMPPD  X2, X4, $1
	MOVAPD X2, X5
	XORPD  X3, X5
	ANDPD  X4, X5
	XORPD  X5, X3
	MOVUPD X3, (DI)(AX*1)
	MOVOU  (DX)(AX*1), X6
	MOVOU  X1, X7
	PXOR   X6, X7
	PAND   X4, X7
	PXOR   X7, X6
	MOVOU  X6, (DX)(AX*1)
	ADDQ   $16, AX
	DECQ   CX
	JNZ    relaxAboveSSE2loop

relaxAboveSSE2done:
	RET

// func relaxBelowSSE2(cur []float64, bk []int, row []float64, pj float64, j int)
// For the pairs of labels below len(cur) &^ 1: where pj+row[k] >= cur[k], cur[k] takes
// that sum and bk[k] takes j (branch-free: compare, then select bits).
TEXT ·relaxBelowSSE2(SB), NOSPLIT, $0-88
	MOVQ   cur_base+0(FP), DI
	MOVQ   cur_len+8(FP), CX
	MOVQ   bk_base+24(FP), DX
	MOVQ   row_base+48(FP), SI
	MOVSD  pj+72(FP), X0
	SHUFPD $0, X0, X0
	MOVQ   j+80(FP), X1
	SHUFPD $0, X1, X1
	SHRQ   $1, CX
	JZ     relaxBelowSSE2done
	XORQ   AX, AX

relaxBelowSSE2loop:
	MOVUPD (SI)(AX*1), X2
	ADDPD  X0, X2
	MOVUPD (DI)(AX*1), X3
	MOVAPD X3, X4
	CMPPD  X2, X4, $2
	MOVAPD X2, X5
	XORPD  X3, X5
	ANDPD  X4, X5
	XORPD  X5, X3
	MOVUPD X3, (DI)(AX*1)
	MOVOU  (DX)(AX*1), X6
	MOVOU  X1, X7
	PXOR   X6, X7
	PAND   X4, X7
	PXOR   X7, X6
	MOVOU  X6, (DX)(AX*1)
	ADDQ   $16, AX
	DECQ   CX
	JNZ    relaxBelowSSE2loop

relaxBelowSSE2done:
	RET
