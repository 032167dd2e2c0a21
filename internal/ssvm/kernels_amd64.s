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

// func letter26(e, wt []float64, idx []uint16, o []int32, acc []float64)
// One letter's 26 emission scores from its features idx[o[r]:o[r+1]] in
// four lanes and a tail (o has 6 entries): lane r sums the rows wt[26f:]
// of its features in order from +0 (the tail continues lane 0), and
// e[k] = (a1[k] + a3[k]) + (a0[k] + a2[k]). Lanes 0–2 are kept in acc
// (78 entries), lane 3 in X0–X12.
TEXT ·letter26(SB), NOSPLIT, $0-120
	MOVQ e_base+0(FP), DI
	MOVQ wt_base+24(FP), SI
	MOVQ idx_base+48(FP), R8
	MOVQ o_base+72(FP), R9
	MOVQ acc_base+96(FP), R10

	XORPD X0, X0
	XORPD X1, X1
	XORPD X2, X2
	XORPD X3, X3
	XORPD X4, X4
	XORPD X5, X5
	XORPD X6, X6
	XORPD X7, X7
	XORPD X8, X8
	XORPD X9, X9
	XORPD X10, X10
	XORPD X11, X11
	XORPD X12, X12
	MOVLQSX 0(R9), BX
	MOVLQSX 4(R9), CX
	SUBQ BX, CX
	JLE lskip1
	LEAQ (R8)(BX*2), BX
lloop1:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	MOVUPD 0(AX), X13
	ADDPD X13, X0
	MOVUPD 16(AX), X14
	ADDPD X14, X1
	MOVUPD 32(AX), X15
	ADDPD X15, X2
	MOVUPD 48(AX), X13
	ADDPD X13, X3
	MOVUPD 64(AX), X14
	ADDPD X14, X4
	MOVUPD 80(AX), X15
	ADDPD X15, X5
	MOVUPD 96(AX), X13
	ADDPD X13, X6
	MOVUPD 112(AX), X14
	ADDPD X14, X7
	MOVUPD 128(AX), X15
	ADDPD X15, X8
	MOVUPD 144(AX), X13
	ADDPD X13, X9
	MOVUPD 160(AX), X14
	ADDPD X14, X10
	MOVUPD 176(AX), X15
	ADDPD X15, X11
	MOVUPD 192(AX), X13
	ADDPD X13, X12
	ADDQ $2, BX
	DECQ CX
	JNZ lloop1
lskip1:
	MOVLQSX 16(R9), BX
	MOVLQSX 20(R9), CX
	SUBQ BX, CX
	JLE lskip2
	LEAQ (R8)(BX*2), BX
lloop2:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	MOVUPD 0(AX), X13
	ADDPD X13, X0
	MOVUPD 16(AX), X14
	ADDPD X14, X1
	MOVUPD 32(AX), X15
	ADDPD X15, X2
	MOVUPD 48(AX), X13
	ADDPD X13, X3
	MOVUPD 64(AX), X14
	ADDPD X14, X4
	MOVUPD 80(AX), X15
	ADDPD X15, X5
	MOVUPD 96(AX), X13
	ADDPD X13, X6
	MOVUPD 112(AX), X14
	ADDPD X14, X7
	MOVUPD 128(AX), X15
	ADDPD X15, X8
	MOVUPD 144(AX), X13
	ADDPD X13, X9
	MOVUPD 160(AX), X14
	ADDPD X14, X10
	MOVUPD 176(AX), X15
	ADDPD X15, X11
	MOVUPD 192(AX), X13
	ADDPD X13, X12
	ADDQ $2, BX
	DECQ CX
	JNZ lloop2
lskip2:
	MOVUPD X0, 0(R10)
	MOVUPD X1, 16(R10)
	MOVUPD X2, 32(R10)
	MOVUPD X3, 48(R10)
	MOVUPD X4, 64(R10)
	MOVUPD X5, 80(R10)
	MOVUPD X6, 96(R10)
	MOVUPD X7, 112(R10)
	MOVUPD X8, 128(R10)
	MOVUPD X9, 144(R10)
	MOVUPD X10, 160(R10)
	MOVUPD X11, 176(R10)
	MOVUPD X12, 192(R10)
	XORPD X0, X0
	XORPD X1, X1
	XORPD X2, X2
	XORPD X3, X3
	XORPD X4, X4
	XORPD X5, X5
	XORPD X6, X6
	XORPD X7, X7
	XORPD X8, X8
	XORPD X9, X9
	XORPD X10, X10
	XORPD X11, X11
	XORPD X12, X12
	MOVLQSX 4(R9), BX
	MOVLQSX 8(R9), CX
	SUBQ BX, CX
	JLE lskip3
	LEAQ (R8)(BX*2), BX
lloop3:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	MOVUPD 0(AX), X13
	ADDPD X13, X0
	MOVUPD 16(AX), X14
	ADDPD X14, X1
	MOVUPD 32(AX), X15
	ADDPD X15, X2
	MOVUPD 48(AX), X13
	ADDPD X13, X3
	MOVUPD 64(AX), X14
	ADDPD X14, X4
	MOVUPD 80(AX), X15
	ADDPD X15, X5
	MOVUPD 96(AX), X13
	ADDPD X13, X6
	MOVUPD 112(AX), X14
	ADDPD X14, X7
	MOVUPD 128(AX), X15
	ADDPD X15, X8
	MOVUPD 144(AX), X13
	ADDPD X13, X9
	MOVUPD 160(AX), X14
	ADDPD X14, X10
	MOVUPD 176(AX), X15
	ADDPD X15, X11
	MOVUPD 192(AX), X13
	ADDPD X13, X12
	ADDQ $2, BX
	DECQ CX
	JNZ lloop3
lskip3:
	MOVUPD X0, 208(R10)
	MOVUPD X1, 224(R10)
	MOVUPD X2, 240(R10)
	MOVUPD X3, 256(R10)
	MOVUPD X4, 272(R10)
	MOVUPD X5, 288(R10)
	MOVUPD X6, 304(R10)
	MOVUPD X7, 320(R10)
	MOVUPD X8, 336(R10)
	MOVUPD X9, 352(R10)
	MOVUPD X10, 368(R10)
	MOVUPD X11, 384(R10)
	MOVUPD X12, 400(R10)
	XORPD X0, X0
	XORPD X1, X1
	XORPD X2, X2
	XORPD X3, X3
	XORPD X4, X4
	XORPD X5, X5
	XORPD X6, X6
	XORPD X7, X7
	XORPD X8, X8
	XORPD X9, X9
	XORPD X10, X10
	XORPD X11, X11
	XORPD X12, X12
	MOVLQSX 8(R9), BX
	MOVLQSX 12(R9), CX
	SUBQ BX, CX
	JLE lskip4
	LEAQ (R8)(BX*2), BX
lloop4:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	MOVUPD 0(AX), X13
	ADDPD X13, X0
	MOVUPD 16(AX), X14
	ADDPD X14, X1
	MOVUPD 32(AX), X15
	ADDPD X15, X2
	MOVUPD 48(AX), X13
	ADDPD X13, X3
	MOVUPD 64(AX), X14
	ADDPD X14, X4
	MOVUPD 80(AX), X15
	ADDPD X15, X5
	MOVUPD 96(AX), X13
	ADDPD X13, X6
	MOVUPD 112(AX), X14
	ADDPD X14, X7
	MOVUPD 128(AX), X15
	ADDPD X15, X8
	MOVUPD 144(AX), X13
	ADDPD X13, X9
	MOVUPD 160(AX), X14
	ADDPD X14, X10
	MOVUPD 176(AX), X15
	ADDPD X15, X11
	MOVUPD 192(AX), X13
	ADDPD X13, X12
	ADDQ $2, BX
	DECQ CX
	JNZ lloop4
lskip4:
	MOVUPD X0, 416(R10)
	MOVUPD X1, 432(R10)
	MOVUPD X2, 448(R10)
	MOVUPD X3, 464(R10)
	MOVUPD X4, 480(R10)
	MOVUPD X5, 496(R10)
	MOVUPD X6, 512(R10)
	MOVUPD X7, 528(R10)
	MOVUPD X8, 544(R10)
	MOVUPD X9, 560(R10)
	MOVUPD X10, 576(R10)
	MOVUPD X11, 592(R10)
	MOVUPD X12, 608(R10)
	XORPD X0, X0
	XORPD X1, X1
	XORPD X2, X2
	XORPD X3, X3
	XORPD X4, X4
	XORPD X5, X5
	XORPD X6, X6
	XORPD X7, X7
	XORPD X8, X8
	XORPD X9, X9
	XORPD X10, X10
	XORPD X11, X11
	XORPD X12, X12
	MOVLQSX 12(R9), BX
	MOVLQSX 16(R9), CX
	SUBQ BX, CX
	JLE lskip5
	LEAQ (R8)(BX*2), BX
lloop5:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	MOVUPD 0(AX), X13
	ADDPD X13, X0
	MOVUPD 16(AX), X14
	ADDPD X14, X1
	MOVUPD 32(AX), X15
	ADDPD X15, X2
	MOVUPD 48(AX), X13
	ADDPD X13, X3
	MOVUPD 64(AX), X14
	ADDPD X14, X4
	MOVUPD 80(AX), X15
	ADDPD X15, X5
	MOVUPD 96(AX), X13
	ADDPD X13, X6
	MOVUPD 112(AX), X14
	ADDPD X14, X7
	MOVUPD 128(AX), X15
	ADDPD X15, X8
	MOVUPD 144(AX), X13
	ADDPD X13, X9
	MOVUPD 160(AX), X14
	ADDPD X14, X10
	MOVUPD 176(AX), X15
	ADDPD X15, X11
	MOVUPD 192(AX), X13
	ADDPD X13, X12
	ADDQ $2, BX
	DECQ CX
	JNZ lloop5
lskip5:
	MOVUPD 208(R10), X13
	ADDPD X0, X13
	MOVUPD 0(R10), X14
	MOVUPD 416(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 0(DI)
	MOVUPD 224(R10), X13
	ADDPD X1, X13
	MOVUPD 16(R10), X14
	MOVUPD 432(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 16(DI)
	MOVUPD 240(R10), X13
	ADDPD X2, X13
	MOVUPD 32(R10), X14
	MOVUPD 448(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 32(DI)
	MOVUPD 256(R10), X13
	ADDPD X3, X13
	MOVUPD 48(R10), X14
	MOVUPD 464(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 48(DI)
	MOVUPD 272(R10), X13
	ADDPD X4, X13
	MOVUPD 64(R10), X14
	MOVUPD 480(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 64(DI)
	MOVUPD 288(R10), X13
	ADDPD X5, X13
	MOVUPD 80(R10), X14
	MOVUPD 496(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 80(DI)
	MOVUPD 304(R10), X13
	ADDPD X6, X13
	MOVUPD 96(R10), X14
	MOVUPD 512(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 96(DI)
	MOVUPD 320(R10), X13
	ADDPD X7, X13
	MOVUPD 112(R10), X14
	MOVUPD 528(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 112(DI)
	MOVUPD 336(R10), X13
	ADDPD X8, X13
	MOVUPD 128(R10), X14
	MOVUPD 544(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 128(DI)
	MOVUPD 352(R10), X13
	ADDPD X9, X13
	MOVUPD 144(R10), X14
	MOVUPD 560(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 144(DI)
	MOVUPD 368(R10), X13
	ADDPD X10, X13
	MOVUPD 160(R10), X14
	MOVUPD 576(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 160(DI)
	MOVUPD 384(R10), X13
	ADDPD X11, X13
	MOVUPD 176(R10), X14
	MOVUPD 592(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 176(DI)
	MOVUPD 400(R10), X13
	ADDPD X12, X13
	MOVUPD 192(R10), X14
	MOVUPD 608(R10), X15
	ADDPD X15, X14
	ADDPD X14, X13
	MOVUPD X13, 192(DI)
	RET

// func addRowsTo26(wt []float64, idx []uint16, r *[26]float64)
// For each feature f of idx in turn: wt[26f+k] += r[k], k < 26 (r held in
// X0–X12, each row loaded, added to and stored back).
TEXT ·addRowsTo26(SB), NOSPLIT, $0-56
	MOVQ wt_base+0(FP), SI
	MOVQ idx_base+24(FP), BX
	MOVQ idx_len+32(FP), CX
	MOVQ r+48(FP), DX
	MOVUPD 0(DX), X0
	MOVUPD 16(DX), X1
	MOVUPD 32(DX), X2
	MOVUPD 48(DX), X3
	MOVUPD 64(DX), X4
	MOVUPD 80(DX), X5
	MOVUPD 96(DX), X6
	MOVUPD 112(DX), X7
	MOVUPD 128(DX), X8
	MOVUPD 144(DX), X9
	MOVUPD 160(DX), X10
	MOVUPD 176(DX), X11
	MOVUPD 192(DX), X12
	TESTQ CX, CX
	JZ    addRowsTo26done

addRowsTo26loop:
	MOVWQZX (BX), AX
	IMULQ   $208, AX
	ADDQ    SI, AX
	MOVUPD 0(AX), X13
	ADDPD  X0, X13
	MOVUPD X13, 0(AX)
	MOVUPD 16(AX), X14
	ADDPD  X1, X14
	MOVUPD X14, 16(AX)
	MOVUPD 32(AX), X15
	ADDPD  X2, X15
	MOVUPD X15, 32(AX)
	MOVUPD 48(AX), X13
	ADDPD  X3, X13
	MOVUPD X13, 48(AX)
	MOVUPD 64(AX), X14
	ADDPD  X4, X14
	MOVUPD X14, 64(AX)
	MOVUPD 80(AX), X15
	ADDPD  X5, X15
	MOVUPD X15, 80(AX)
	MOVUPD 96(AX), X13
	ADDPD  X6, X13
	MOVUPD X13, 96(AX)
	MOVUPD 112(AX), X14
	ADDPD  X7, X14
	MOVUPD X14, 112(AX)
	MOVUPD 128(AX), X15
	ADDPD  X8, X15
	MOVUPD X15, 128(AX)
	MOVUPD 144(AX), X13
	ADDPD  X9, X13
	MOVUPD X13, 144(AX)
	MOVUPD 160(AX), X14
	ADDPD  X10, X14
	MOVUPD X14, 160(AX)
	MOVUPD 176(AX), X15
	ADDPD  X11, X15
	MOVUPD X15, 176(AX)
	MOVUPD 192(AX), X13
	ADDPD  X12, X13
	MOVUPD X13, 192(AX)
	ADDQ $2, BX
	DECQ CX
	JNZ  addRowsTo26loop

addRowsTo26done:
	RET

// func pruneSSE2(prev, ub, lb []float64, cand []int) (js, n int)
// pruneCandidates for len(prev) ≥ 1: the maximum of prev by pairs (MAXPD)
// with a mask of the non-finite entries ((v − v) unordered); j* the lowest
// index attaining the maximum; then the candidates j with
// prev[j] + ub[j] ≥ prev[j*] + lb[j*], written branch-free in increasing
// order. Returns (0, 0) when an entry of prev is not finite.
TEXT ·pruneSSE2(SB), NOSPLIT, $0-112
	MOVQ   prev_base+0(FP), SI
	MOVQ   prev_len+8(FP), CX
	MOVQ   ub_base+24(FP), DX
	MOVQ   lb_base+48(FP), R8
	MOVQ   cand_base+72(FP), DI
	MOVSD  (SI), X0
	SHUFPD $0, X0, X0
	XORPD  X1, X1
	MOVQ   CX, BX
	SHRQ   $1, BX
	XORQ   AX, AX
	TESTQ  BX, BX
	JZ     pmaxtail

pmaxloop:
	MOVUPD (SI)(AX*1), X2
	MAXPD  X2, X0
	MOVAPD X2, X3
	SUBPD  X2, X3
	CMPPD  X3, X3, $3
	ORPD   X3, X1
	ADDQ   $16, AX
	DECQ   BX
	JNZ    pmaxloop

pmaxtail:
	TESTQ  $1, CX
	JZ     pmaxdone
	MOVSD  (SI)(AX*1), X2
	MAXSD  X2, X0
	MOVAPD X2, X3
	SUBSD  X2, X3
	CMPSD  X3, X3, $3
	ORPD   X3, X1

pmaxdone:
	MOVMSKPD X1, BX
	TESTQ    BX, BX
	JNZ      pnonfinite
	MOVAPD   X0, X2
	UNPCKHPD X2, X2
	MAXSD    X2, X0
	XORQ     BX, BX

pfind:
	MOVSD   (SI)(BX*8), X2
	UCOMISD X0, X2
	JEQ     pfound
	INCQ    BX
	CMPQ    BX, CX
	JLT     pfind
	XORQ    BX, BX

pfound:
	MOVQ   BX, js+96(FP)
	MOVSD  (SI)(BX*8), X4
	ADDSD  (R8)(BX*8), X4
	SHUFPD $0, X4, X4
	XORQ   R9, R9
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-2, BX

pcandloop:
	CMPQ     AX, BX
	JGE      pcandtail
	MOVUPD   (SI)(AX*8), X2
	MOVUPD   (DX)(AX*8), X3
	ADDPD    X3, X2
	MOVAPD   X4, X5
	CMPPD    X2, X5, $2
	MOVMSKPD X5, R10
	MOVQ     AX, (DI)(R9*8)
	MOVQ     R10, R11
	ANDQ     $1, R11
	ADDQ     R11, R9
	LEAQ     1(AX), R11
	MOVQ     R11, (DI)(R9*8)
	SHRQ     $1, R10
	ADDQ     R10, R9
	ADDQ     $2, AX
	JMP      pcandloop

pcandtail:
	CMPQ    AX, CX
	JGE     pcanddone
	MOVSD   (SI)(AX*8), X2
	ADDSD   (DX)(AX*8), X2
	MOVQ    AX, (DI)(R9*8)
	UCOMISD X4, X2
	JCS     pcanddone
	INCQ    R9

pcanddone:
	MOVQ R9, n+104(FP)
	RET

pnonfinite:
	MOVQ $0, js+96(FP)
	MOVQ $0, n+104(FP)
	RET

// func letter26AVX2(e, wt []float64, idx []uint16, o []int32, acc []float64)
// letter26 with 256-bit vectors: a lane's 26 sums in Y0–Y5 and X6 (or
// Y7–Y12 and X13), two lanes at a time (lanes 0 and 1, then 2 and 3; the
// tail continues lane 0), lanes 0 and 1 kept in acc (52 entries) meanwhile;
// then e[k] = (a1[k] + a3[k]) + (a0[k] + a2[k]). The same sums in the same
// order as letter26.
TEXT ·letter26AVX2(SB), NOSPLIT, $0-120
	MOVQ e_base+0(FP), DI
	MOVQ wt_base+24(FP), SI
	MOVQ idx_base+48(FP), R8
	MOVQ o_base+72(FP), R9
	MOVQ acc_base+96(FP), R10
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	MOVLQSX 0(R9), BX
	MOVLQSX 4(R9), CX
	SUBQ BX, CX
	JLE avl0skip
	LEAQ (R8)(BX*2), BX
avl0loop:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	VADDPD 0(AX), Y0, Y0
	VADDPD 32(AX), Y1, Y1
	VADDPD 64(AX), Y2, Y2
	VADDPD 96(AX), Y3, Y3
	VADDPD 128(AX), Y4, Y4
	VADDPD 160(AX), Y5, Y5
	VADDPD 192(AX), X6, X6
	ADDQ $2, BX
	DECQ CX
	JNZ avl0loop
avl0skip:
	MOVLQSX 16(R9), BX
	MOVLQSX 20(R9), CX
	SUBQ BX, CX
	JLE avl4skip
	LEAQ (R8)(BX*2), BX
avl4loop:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	VADDPD 0(AX), Y0, Y0
	VADDPD 32(AX), Y1, Y1
	VADDPD 64(AX), Y2, Y2
	VADDPD 96(AX), Y3, Y3
	VADDPD 128(AX), Y4, Y4
	VADDPD 160(AX), Y5, Y5
	VADDPD 192(AX), X6, X6
	ADDQ $2, BX
	DECQ CX
	JNZ avl4loop
avl4skip:
	MOVLQSX 4(R9), BX
	MOVLQSX 8(R9), CX
	SUBQ BX, CX
	JLE avl1skip
	LEAQ (R8)(BX*2), BX
avl1loop:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	VADDPD 0(AX), Y7, Y7
	VADDPD 32(AX), Y8, Y8
	VADDPD 64(AX), Y9, Y9
	VADDPD 96(AX), Y10, Y10
	VADDPD 128(AX), Y11, Y11
	VADDPD 160(AX), Y12, Y12
	VADDPD 192(AX), X13, X13
	ADDQ $2, BX
	DECQ CX
	JNZ avl1loop
avl1skip:
	VMOVUPD Y0, 0(R10)
	VMOVUPD Y1, 32(R10)
	VMOVUPD Y2, 64(R10)
	VMOVUPD Y3, 96(R10)
	VMOVUPD Y4, 128(R10)
	VMOVUPD Y5, 160(R10)
	VMOVUPD X6, 192(R10)
	VMOVUPD Y7, 208(R10)
	VMOVUPD Y8, 240(R10)
	VMOVUPD Y9, 272(R10)
	VMOVUPD Y10, 304(R10)
	VMOVUPD Y11, 336(R10)
	VMOVUPD Y12, 368(R10)
	VMOVUPD X13, 400(R10)
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	MOVLQSX 8(R9), BX
	MOVLQSX 12(R9), CX
	SUBQ BX, CX
	JLE avl2skip
	LEAQ (R8)(BX*2), BX
avl2loop:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	VADDPD 0(AX), Y0, Y0
	VADDPD 32(AX), Y1, Y1
	VADDPD 64(AX), Y2, Y2
	VADDPD 96(AX), Y3, Y3
	VADDPD 128(AX), Y4, Y4
	VADDPD 160(AX), Y5, Y5
	VADDPD 192(AX), X6, X6
	ADDQ $2, BX
	DECQ CX
	JNZ avl2loop
avl2skip:
	MOVLQSX 12(R9), BX
	MOVLQSX 16(R9), CX
	SUBQ BX, CX
	JLE avl3skip
	LEAQ (R8)(BX*2), BX
avl3loop:
	MOVWQZX (BX), AX
	IMULQ $208, AX
	ADDQ SI, AX
	VADDPD 0(AX), Y7, Y7
	VADDPD 32(AX), Y8, Y8
	VADDPD 64(AX), Y9, Y9
	VADDPD 96(AX), Y10, Y10
	VADDPD 128(AX), Y11, Y11
	VADDPD 160(AX), Y12, Y12
	VADDPD 192(AX), X13, X13
	ADDQ $2, BX
	DECQ CX
	JNZ avl3loop
avl3skip:
	VMOVUPD 208(R10), Y14
	VADDPD Y7, Y14, Y14
	VMOVUPD 0(R10), Y15
	VADDPD Y0, Y15, Y15
	VADDPD Y15, Y14, Y14
	VMOVUPD Y14, 0(DI)
	VMOVUPD 240(R10), Y14
	VADDPD Y8, Y14, Y14
	VMOVUPD 32(R10), Y15
	VADDPD Y1, Y15, Y15
	VADDPD Y15, Y14, Y14
	VMOVUPD Y14, 32(DI)
	VMOVUPD 272(R10), Y14
	VADDPD Y9, Y14, Y14
	VMOVUPD 64(R10), Y15
	VADDPD Y2, Y15, Y15
	VADDPD Y15, Y14, Y14
	VMOVUPD Y14, 64(DI)
	VMOVUPD 304(R10), Y14
	VADDPD Y10, Y14, Y14
	VMOVUPD 96(R10), Y15
	VADDPD Y3, Y15, Y15
	VADDPD Y15, Y14, Y14
	VMOVUPD Y14, 96(DI)
	VMOVUPD 336(R10), Y14
	VADDPD Y11, Y14, Y14
	VMOVUPD 128(R10), Y15
	VADDPD Y4, Y15, Y15
	VADDPD Y15, Y14, Y14
	VMOVUPD Y14, 128(DI)
	VMOVUPD 368(R10), Y14
	VADDPD Y12, Y14, Y14
	VMOVUPD 160(R10), Y15
	VADDPD Y5, Y15, Y15
	VADDPD Y15, Y14, Y14
	VMOVUPD Y14, 160(DI)
	VMOVUPD 400(R10), X14
	VADDPD X13, X14, X14
	VMOVUPD 192(R10), X15
	VADDPD X6, X15, X15
	VADDPD X15, X14, X14
	VMOVUPD X14, 192(DI)
	VZEROUPPER
	RET

// func relaxAboveAVX2(cur []float64, bk []int, row []float64, pj float64, j int)
// For the labels below len(cur) &^ 1, four (then two) at a time: where
// pj+row[k] > cur[k], cur[k] takes that sum and bk[k] takes j
// (compare, then blend).
TEXT ·relaxAboveAVX2(SB), NOSPLIT, $0-88
	MOVQ         cur_base+0(FP), DI
	MOVQ         cur_len+8(FP), CX
	MOVQ         bk_base+24(FP), DX
	MOVQ         row_base+48(FP), SI
	VBROADCASTSD pj+72(FP), Y0
	VPBROADCASTQ j+80(FP), Y1
	MOVQ         CX, BX
	XORQ         AX, AX
	SHRQ         $2, CX
	JZ           relaxAboveAVX2pair

relaxAboveAVX2loop:
	VMOVUPD   (SI)(AX*1), Y2
	VADDPD    Y0, Y2, Y2
	VMOVUPD   (DI)(AX*1), Y3
	VCMPPD    $1, Y2, Y3, Y4
	VBLENDVPD Y4, Y2, Y3, Y3
	VMOVUPD   Y3, (DI)(AX*1)
	VMOVDQU   (DX)(AX*1), Y5
	VBLENDVPD Y4, Y1, Y5, Y5
	VMOVDQU   Y5, (DX)(AX*1)
	ADDQ      $32, AX
	DECQ      CX
	JNZ       relaxAboveAVX2loop

relaxAboveAVX2pair:
	TESTQ     $2, BX
	JZ        relaxAboveAVX2done
	VMOVUPD   (SI)(AX*1), X2
	VADDPD    X0, X2, X2
	VMOVUPD   (DI)(AX*1), X3
	VCMPPD    $1, X2, X3, X4
	VBLENDVPD X4, X2, X3, X3
	VMOVUPD   X3, (DI)(AX*1)
	VMOVDQU   (DX)(AX*1), X5
	VBLENDVPD X4, X1, X5, X5
	VMOVDQU   X5, (DX)(AX*1)

relaxAboveAVX2done:
	VZEROUPPER
	RET

// func relaxBelowAVX2(cur []float64, bk []int, row []float64, pj float64, j int)
// For the labels below len(cur) &^ 1, four (then two) at a time: where
// pj+row[k] >= cur[k], cur[k] takes that sum and bk[k] takes j
// (compare, then blend).
TEXT ·relaxBelowAVX2(SB), NOSPLIT, $0-88
	MOVQ         cur_base+0(FP), DI
	MOVQ         cur_len+8(FP), CX
	MOVQ         bk_base+24(FP), DX
	MOVQ         row_base+48(FP), SI
	VBROADCASTSD pj+72(FP), Y0
	VPBROADCASTQ j+80(FP), Y1
	MOVQ         CX, BX
	XORQ         AX, AX
	SHRQ         $2, CX
	JZ           relaxBelowAVX2pair

relaxBelowAVX2loop:
	VMOVUPD   (SI)(AX*1), Y2
	VADDPD    Y0, Y2, Y2
	VMOVUPD   (DI)(AX*1), Y3
	VCMPPD    $2, Y2, Y3, Y4
	VBLENDVPD Y4, Y2, Y3, Y3
	VMOVUPD   Y3, (DI)(AX*1)
	VMOVDQU   (DX)(AX*1), Y5
	VBLENDVPD Y4, Y1, Y5, Y5
	VMOVDQU   Y5, (DX)(AX*1)
	ADDQ      $32, AX
	DECQ      CX
	JNZ       relaxBelowAVX2loop

relaxBelowAVX2pair:
	TESTQ     $2, BX
	JZ        relaxBelowAVX2done
	VMOVUPD   (SI)(AX*1), X2
	VADDPD    X0, X2, X2
	VMOVUPD   (DI)(AX*1), X3
	VCMPPD    $2, X2, X3, X4
	VBLENDVPD X4, X2, X3, X3
	VMOVUPD   X3, (DI)(AX*1)
	VMOVDQU   (DX)(AX*1), X5
	VBLENDVPD X4, X1, X5, X5
	VMOVDQU   X5, (DX)(AX*1)

relaxBelowAVX2done:
	VZEROUPPER
	RET

// func fillRowAVX2(cur []float64, bk []int, row []float64, pj float64, j int)
// For the labels below len(cur) &^ 3, four at a time: cur[k] = pj + row[k],
// bk[k] = j.
TEXT ·fillRowAVX2(SB), NOSPLIT, $0-88
	MOVQ         cur_base+0(FP), DI
	MOVQ         cur_len+8(FP), CX
	MOVQ         bk_base+24(FP), DX
	MOVQ         row_base+48(FP), SI
	VBROADCASTSD pj+72(FP), Y0
	VPBROADCASTQ j+80(FP), Y1
	SHRQ         $2, CX
	JZ           fillRowAVX2done
	XORQ         AX, AX

fillRowAVX2loop:
	VADDPD  (SI)(AX*1), Y0, Y2
	VMOVUPD Y2, (DI)(AX*1)
	VMOVDQU Y1, (DX)(AX*1)
	ADDQ    $32, AX
	DECQ    CX
	JNZ     fillRowAVX2loop

fillRowAVX2done:
	VZEROUPPER
	RET

// func addRowAVX2(cur, e []float64, a float64, aug bool)
// For the labels below len(cur) &^ 3, four at a time: cur[k] += e[k] + a
// with aug, cur[k] += e[k] without.
TEXT ·addRowAVX2(SB), NOSPLIT, $0-57
	MOVQ         cur_base+0(FP), DI
	MOVQ         cur_len+8(FP), CX
	MOVQ         e_base+24(FP), SI
	VBROADCASTSD a+48(FP), Y0
	MOVBLZX      aug+56(FP), BX
	SHRQ         $2, CX
	JZ           addRowAVX2done
	XORQ         AX, AX
	TESTQ        BX, BX
	JZ           addRowAVX2plain

addRowAVX2aug:
	VADDPD  (SI)(AX*1), Y0, Y2
	VADDPD  (DI)(AX*1), Y2, Y2
	VMOVUPD Y2, (DI)(AX*1)
	ADDQ    $32, AX
	DECQ    CX
	JNZ     addRowAVX2aug
	JMP     addRowAVX2done

addRowAVX2plain:
	VMOVUPD (DI)(AX*1), Y2
	VADDPD  (SI)(AX*1), Y2, Y2
	VMOVUPD Y2, (DI)(AX*1)
	ADDQ    $32, AX
	DECQ    CX
	JNZ     addRowAVX2plain

addRowAVX2done:
	VZEROUPPER
	RET

// func addRowsTo26AVX2(wt []float64, idx []uint16, r *[26]float64)
// addRowsTo26 with 256-bit vectors (r held in Y0–Y5 and X6).
TEXT ·addRowsTo26AVX2(SB), NOSPLIT, $0-56
	MOVQ wt_base+0(FP), SI
	MOVQ idx_base+24(FP), BX
	MOVQ idx_len+32(FP), CX
	MOVQ r+48(FP), DX
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), X6
	TESTQ CX, CX
	JZ    addRowsTo26AVX2done

addRowsTo26AVX2loop:
	MOVWQZX (BX), AX
	IMULQ   $208, AX
	ADDQ    SI, AX
	VADDPD 0(AX), Y0, Y7
	VMOVUPD Y7, 0(AX)
	VADDPD 32(AX), Y1, Y8
	VMOVUPD Y8, 32(AX)
	VADDPD 64(AX), Y2, Y9
	VMOVUPD Y9, 64(AX)
	VADDPD 96(AX), Y3, Y7
	VMOVUPD Y7, 96(AX)
	VADDPD 128(AX), Y4, Y8
	VMOVUPD Y8, 128(AX)
	VADDPD 160(AX), Y5, Y9
	VMOVUPD Y9, 160(AX)
	VADDPD 192(AX), X6, X10
	VMOVUPD X10, 192(AX)
	ADDQ $2, BX
	DECQ CX
	JNZ  addRowsTo26AVX2loop

addRowsTo26AVX2done:
	VZEROUPPER
	RET

// func residual26AVX2(r, e, mu *[26]float64) (mask uint32)
// r[k] = e[k] − mu[k] for k < 26; bit k of mask is set where r[k] ≠ 0.
TEXT ·residual26AVX2(SB), NOSPLIT, $0-28
	MOVQ   r+0(FP), DI
	MOVQ   e+8(FP), SI
	MOVQ   mu+16(FP), DX
	VXORPD Y15, Y15, Y15
	XORQ   BX, BX
	VMOVUPD   0(SI), Y0
	VSUBPD    0(DX), Y0, Y0
	VMOVUPD   Y0, 0(DI)
	VCMPPD    $4, Y15, Y0, Y1
	VMOVMSKPD Y1, AX
	SHLQ      $0, AX
	ORQ       AX, BX
	VMOVUPD   32(SI), Y0
	VSUBPD    32(DX), Y0, Y0
	VMOVUPD   Y0, 32(DI)
	VCMPPD    $4, Y15, Y0, Y1
	VMOVMSKPD Y1, AX
	SHLQ      $4, AX
	ORQ       AX, BX
	VMOVUPD   64(SI), Y0
	VSUBPD    64(DX), Y0, Y0
	VMOVUPD   Y0, 64(DI)
	VCMPPD    $4, Y15, Y0, Y1
	VMOVMSKPD Y1, AX
	SHLQ      $8, AX
	ORQ       AX, BX
	VMOVUPD   96(SI), Y0
	VSUBPD    96(DX), Y0, Y0
	VMOVUPD   Y0, 96(DI)
	VCMPPD    $4, Y15, Y0, Y1
	VMOVMSKPD Y1, AX
	SHLQ      $12, AX
	ORQ       AX, BX
	VMOVUPD   128(SI), Y0
	VSUBPD    128(DX), Y0, Y0
	VMOVUPD   Y0, 128(DI)
	VCMPPD    $4, Y15, Y0, Y1
	VMOVMSKPD Y1, AX
	SHLQ      $16, AX
	ORQ       AX, BX
	VMOVUPD   160(SI), Y0
	VSUBPD    160(DX), Y0, Y0
	VMOVUPD   Y0, 160(DI)
	VCMPPD    $4, Y15, Y0, Y1
	VMOVMSKPD Y1, AX
	SHLQ      $20, AX
	ORQ       AX, BX
	VMOVUPD   192(SI), X0
	VSUBPD    192(DX), X0, X0
	VMOVUPD   X0, 192(DI)
	VCMPPD    $4, X15, X0, X1
	VMOVMSKPD X1, AX
	SHLQ      $24, AX
	ORQ       AX, BX
	MOVL      BX, mask+24(FP)
	VZEROUPPER
	RET

// func prune26AVX2(prev, ub, lb *[26]float64) (js int, mask uint32, ok bool)
// pruneCandidates for 26 labels with 256-bit vectors, without branches:
// the maximum of prev by a tree of VMAXPD, finiteness from the sum of
// v − v (NaN when an entry is ±Inf or NaN: ok false), j* the lowest index
// equal to the maximum (mask of the equalities, then BSF), and the mask of
// the candidates j with prev[j] + ub[j] ≥ prev[j*] + lb[j*].
TEXT ·prune26AVX2(SB), NOSPLIT, $0-37
	MOVQ    prev+0(FP), SI
	MOVQ    ub+8(FP), DX
	MOVQ    lb+16(FP), R8
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMOVUPD 128(SI), Y4
	VMOVUPD 160(SI), Y5
	VMOVUPD 192(SI), X6
	VSUBPD  Y0, Y0, Y7
	VSUBPD  Y1, Y1, Y8
	VADDPD  Y8, Y7, Y7
	VSUBPD  Y2, Y2, Y8
	VSUBPD  Y3, Y3, Y9
	VADDPD  Y9, Y8, Y8
	VADDPD  Y8, Y7, Y7
	VSUBPD  Y4, Y4, Y8
	VSUBPD  Y5, Y5, Y9
	VADDPD  Y9, Y8, Y8
	VADDPD  Y8, Y7, Y7
	VSUBPD  X6, X6, X8
	VADDPD  X8, X7, X8
	VEXTRACTF128 $1, Y7, X9
	VADDPD  X9, X8, X8
	VCMPPD  $3, X8, X8, X8
	VMOVMSKPD X8, AX
	TESTQ   AX, AX
	JNZ     prune26bad
	VMAXPD  Y1, Y0, Y7
	VMAXPD  Y3, Y2, Y8
	VMAXPD  Y5, Y4, Y9
	VMAXPD  Y8, Y7, Y7
	VMAXPD  Y9, Y7, Y7
	VEXTRACTF128 $1, Y7, X8
	VMAXPD  X8, X7, X7
	VMAXPD  X6, X7, X7
	VPERMILPD $1, X7, X8
	VMAXSD  X8, X7, X7
	VBROADCASTSD X7, Y10
	XORQ    BX, BX
	VCMPPD    $0, Y10, Y0, Y11
	VMOVMSKPD Y11, AX
	SHLQ      $0, AX
	ORQ       AX, BX
	VCMPPD    $0, Y10, Y1, Y11
	VMOVMSKPD Y11, AX
	SHLQ      $4, AX
	ORQ       AX, BX
	VCMPPD    $0, Y10, Y2, Y11
	VMOVMSKPD Y11, AX
	SHLQ      $8, AX
	ORQ       AX, BX
	VCMPPD    $0, Y10, Y3, Y11
	VMOVMSKPD Y11, AX
	SHLQ      $12, AX
	ORQ       AX, BX
	VCMPPD    $0, Y10, Y4, Y11
	VMOVMSKPD Y11, AX
	SHLQ      $16, AX
	ORQ       AX, BX
	VCMPPD    $0, Y10, Y5, Y11
	VMOVMSKPD Y11, AX
	SHLQ      $20, AX
	ORQ       AX, BX
	VCMPPD    $0, X10, X6, X11
	VMOVMSKPD X11, AX
	SHLQ      $24, AX
	ORQ       AX, BX
	BSFQ      BX, CX
	MOVQ      CX, js+24(FP)
	VMOVSD    (SI)(CX*8), X11
	VADDSD    (R8)(CX*8), X11, X11
	VBROADCASTSD X11, Y11
	XORQ      BX, BX
	VADDPD    0(DX), Y0, Y12
	VCMPPD    $2, Y12, Y11, Y12
	VMOVMSKPD Y12, AX
	SHLQ      $0, AX
	ORQ       AX, BX
	VADDPD    32(DX), Y1, Y12
	VCMPPD    $2, Y12, Y11, Y12
	VMOVMSKPD Y12, AX
	SHLQ      $4, AX
	ORQ       AX, BX
	VADDPD    64(DX), Y2, Y12
	VCMPPD    $2, Y12, Y11, Y12
	VMOVMSKPD Y12, AX
	SHLQ      $8, AX
	ORQ       AX, BX
	VADDPD    96(DX), Y3, Y12
	VCMPPD    $2, Y12, Y11, Y12
	VMOVMSKPD Y12, AX
	SHLQ      $12, AX
	ORQ       AX, BX
	VADDPD    128(DX), Y4, Y12
	VCMPPD    $2, Y12, Y11, Y12
	VMOVMSKPD Y12, AX
	SHLQ      $16, AX
	ORQ       AX, BX
	VADDPD    160(DX), Y5, Y12
	VCMPPD    $2, Y12, Y11, Y12
	VMOVMSKPD Y12, AX
	SHLQ      $20, AX
	ORQ       AX, BX
	VADDPD    192(DX), X6, X12
	VCMPPD    $2, X12, X11, X12
	VMOVMSKPD X12, AX
	SHLQ      $24, AX
	ORQ       AX, BX
	MOVL      BX, mask+32(FP)
	MOVB      $1, ok+36(FP)
	VZEROUPPER
	RET

prune26bad:
	MOVQ $0, js+24(FP)
	MOVL $0, mask+32(FP)
	MOVB $0, ok+36(FP)
	VZEROUPPER
	RET

// func relaxAll26AVX2(prev *[26]float64, cur *[26]float64, bk *[26]int, tT *[676]float64, js int, above, below uint32)
// One Viterbi position for 26 labels: cur = prev[js] + row js of tT, bk = js;
// then for each j of above in increasing order, where prev[j] + tT[j][k] >
// cur[k], cur[k] and bk[k] take that sum and j; then for each j of below in
// decreasing order the same with ≥. cur is kept in Y0–Y5 and X6 throughout;
// the comparisons and sums are relaxAbove's and relaxBelow's.
TEXT ·relaxAll26AVX2(SB), NOSPLIT, $0-48
	MOVQ prev+0(FP), SI
	MOVQ cur+8(FP), DI
	MOVQ bk+16(FP), DX
	MOVQ tT+24(FP), R8
	MOVQ js+32(FP), R9
	MOVL above+40(FP), R10
	MOVL below+44(FP), R11
	VBROADCASTSD (SI)(R9*8), Y14
	MOVQ         R9, X12
	VPBROADCASTQ X12, Y12
	IMUL3Q       $208, R9, AX
	ADDQ         R8, AX
	VADDPD 0(AX), Y14, Y0
	VMOVDQU Y12, 0(DX)
	VADDPD 32(AX), Y14, Y1
	VMOVDQU Y12, 32(DX)
	VADDPD 64(AX), Y14, Y2
	VMOVDQU Y12, 64(DX)
	VADDPD 96(AX), Y14, Y3
	VMOVDQU Y12, 96(DX)
	VADDPD 128(AX), Y14, Y4
	VMOVDQU Y12, 128(DX)
	VADDPD 160(AX), Y14, Y5
	VMOVDQU Y12, 160(DX)
	VADDPD 192(AX), X14, X6
	VMOVDQU X12, 192(DX)

ra26above:
	TESTL R10, R10
	JZ    ra26below
	BSFL  R10, R9
	LEAL  -1(R10), BX
	ANDL  BX, R10
	VBROADCASTSD (SI)(R9*8), Y14
	MOVQ         R9, X12
	VPBROADCASTQ X12, Y12
	IMUL3Q       $208, R9, AX
	ADDQ         R8, AX
	VADDPD    0(AX), Y14, Y15
	VCMPPD    $1, Y15, Y0, Y13
	VBLENDVPD Y13, Y15, Y0, Y0
	VMOVDQU   0(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 0(DX)
	VADDPD    32(AX), Y14, Y15
	VCMPPD    $1, Y15, Y1, Y13
	VBLENDVPD Y13, Y15, Y1, Y1
	VMOVDQU   32(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 32(DX)
	VADDPD    64(AX), Y14, Y15
	VCMPPD    $1, Y15, Y2, Y13
	VBLENDVPD Y13, Y15, Y2, Y2
	VMOVDQU   64(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 64(DX)
	VADDPD    96(AX), Y14, Y15
	VCMPPD    $1, Y15, Y3, Y13
	VBLENDVPD Y13, Y15, Y3, Y3
	VMOVDQU   96(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 96(DX)
	VADDPD    128(AX), Y14, Y15
	VCMPPD    $1, Y15, Y4, Y13
	VBLENDVPD Y13, Y15, Y4, Y4
	VMOVDQU   128(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 128(DX)
	VADDPD    160(AX), Y14, Y15
	VCMPPD    $1, Y15, Y5, Y13
	VBLENDVPD Y13, Y15, Y5, Y5
	VMOVDQU   160(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 160(DX)
	VADDPD    192(AX), X14, X15
	VCMPPD    $1, X15, X6, X13
	VBLENDVPD X13, X15, X6, X6
	VMOVDQU   192(DX), X7
	VBLENDVPD X13, X12, X7, X7
	VMOVDQU   X7, 192(DX)
	JMP ra26above

ra26below:
	TESTL R11, R11
	JZ    ra26done
	BSRL  R11, R9
	BTRL  R9, R11
	VBROADCASTSD (SI)(R9*8), Y14
	MOVQ         R9, X12
	VPBROADCASTQ X12, Y12
	IMUL3Q       $208, R9, AX
	ADDQ         R8, AX
	VADDPD    0(AX), Y14, Y15
	VCMPPD    $2, Y15, Y0, Y13
	VBLENDVPD Y13, Y15, Y0, Y0
	VMOVDQU   0(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 0(DX)
	VADDPD    32(AX), Y14, Y15
	VCMPPD    $2, Y15, Y1, Y13
	VBLENDVPD Y13, Y15, Y1, Y1
	VMOVDQU   32(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 32(DX)
	VADDPD    64(AX), Y14, Y15
	VCMPPD    $2, Y15, Y2, Y13
	VBLENDVPD Y13, Y15, Y2, Y2
	VMOVDQU   64(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 64(DX)
	VADDPD    96(AX), Y14, Y15
	VCMPPD    $2, Y15, Y3, Y13
	VBLENDVPD Y13, Y15, Y3, Y3
	VMOVDQU   96(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 96(DX)
	VADDPD    128(AX), Y14, Y15
	VCMPPD    $2, Y15, Y4, Y13
	VBLENDVPD Y13, Y15, Y4, Y4
	VMOVDQU   128(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 128(DX)
	VADDPD    160(AX), Y14, Y15
	VCMPPD    $2, Y15, Y5, Y13
	VBLENDVPD Y13, Y15, Y5, Y5
	VMOVDQU   160(DX), Y7
	VBLENDVPD Y13, Y12, Y7, Y7
	VMOVDQU   Y7, 160(DX)
	VADDPD    192(AX), X14, X15
	VCMPPD    $2, X15, X6, X13
	VBLENDVPD X13, X15, X6, X6
	VMOVDQU   192(DX), X7
	VBLENDVPD X13, X12, X7, X7
	VMOVDQU   X7, 192(DX)
	JMP ra26below

ra26done:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD X6, 192(DI)
	VZEROUPPER
	RET
