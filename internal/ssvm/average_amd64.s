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

