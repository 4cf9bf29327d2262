/* kernels.h — the kernel table: one row per kernel of kernels/, the one
 * description of a kernel that logos-fuse (which constants it sets), the
 * plan check in logos-run (ranges, argument kinds, buffer sizes) and the CI
 * compile test (every instantiation the lane can ask for) all read.
 *
 * Columns:
 *   id       enum suffix (KN_<id>)
 *   name     the kernel's name in plans and its __global__ function
 *   file     its source in kernels/
 *   consts   compile-time constants "NAME:type:lo:hi", type i (whole) or f
 *            (number); a plan gives every one, NVRTC sees each as a
 *            `constexpr` of that name
 *   params   pointer parameters "name:kinds:dtypes", in the order of the
 *            kernel's Params; kinds are letters of the buffers it accepts
 *            (w weight, s state, i input, o output, t temporary, c constant
 *            table, x scratch, z runtime size; p a table of buffers of the
 *            other kinds, where the constants ask for one), a trailing '?'
 *            an optional one (`-` in a plan); dtypes the accepted element
 *            types
 *   threads  the block size the kernel is written for (0: any the plan says)
 *
 * Each kernel's sizes (what every parameter must hold) are kernel_need() in
 * kernels.c; keep both in step with the kernel's opening comment.
 */
#ifndef K
#error "define K(id, name, file, consts, params, threads)"
#endif

K(EMBED, "embed", "embed.cu",
  "D:i:1:1048576 V:i:1:16777216 WQ:i:0:1 ROWS:i:1:65536 OQ:i:0:2 SCALE:f:-1e30:1e30",
  "W:w:f32,q8 ids:itz:i32 n:z?:i32 y:tio:f32,a8,a8x2", 256)

K(GEMV, "gemv", "gemv.cu",
  "K:i:1:1048576 PARTS:i:1:4 N0:i:1:1048576 N1:i:0:1048576 N2:i:0:1048576 N3:i:0:1048576 "
  "WQ:i:0:1 XIN:i:0:2 XQ:i:0:2 ROWS:i:1:65536 TR:i:1:8 WR:i:1:4 "
  "NORM:i:0:1 EPS:f:0:1 OFFSET:f:-16:16 NW:i:0:1 "
  "BIAS:i:0:15 RES:i:0:15 GATE:i:0:2 CAP:f:0:1e30 ARGMAX:i:0:1 OQ:i:0:2 GRID:i:1:1048576 GS:i:0:1 NOUT:i:0:1 "
  "XG:i:0:1 XGW:i:1:1048576 XGP:i:1:1048576 XGA:i:0:1048576 PRE:i:0:1 XR:i:0:1 PF:i:0:65536",
  "W0:w:f32,q8 W1:w?:f32,q8 W2:w?:f32,q8 W3:w?:f32,q8 x:tiso:f32,a8,a8x2 nw:w?:f32 n:z?:i32 "
  "y0:tos:f32,a8,a8x2 y1:tos?:f32 y2:tos?:f32 y3:tos?:f32 "
  "b0:w?:f32 b1:w?:f32 b2:w?:f32 b3:w?:f32 r0:tio?:f32 r1:tio?:f32 r2:tio?:f32 r3:tio?:f32 "
  "next:to?:i32 part:x?:f32 gs:tio?:f32 xo:to?:f32 xg:tio?:f32 pw:w?:f32 pr:tio?:f32", 256)

K(NORM, "rownorm", "norm.cu",
  "D:i:1:1048576 ROWS:i:1:1048576 RPN:i:1:1048576 KIND:i:0:1 EPS:f:0:1 OFFSET:f:-16:16 NW:i:0:1 MODE:i:0:3 "
  "OQ:i:0:3",
  "x:tios:f32 w:wtis?:f32 r:tio?:f32 n:z?:i32 y:tio:f32,a8,a8x2,a8h w2:wtis?:f32 y2:tio?:f32,a8,a8x2,a8h", 256)

K(ROPE, "rope", "rope.cu",
  "PARTS:i:1:3 H0:i:1:4096 H1:i:0:4096 H2:i:0:4096 W0:i:1:1024 W1:i:0:1024 W2:i:0:1024 "
  "OP0:i:0:1 OP1:i:0:1 OP2:i:0:1 NORM0:i:0:1 NORM1:i:0:1 NORM2:i:0:1 EPS:f:0:1 OFF:f:-16:16 "
  "DST0:i:0:2 DST1:i:0:2 DST2:i:0:2 SROWS0:i:0:1048576 SROWS1:i:0:1048576 SROWS2:i:0:1048576 "
  "ROT:i:2:4096 AF:f:0:1e30 POS:i:0:2 ROWS:i:1:65536 XS0:i:1:1048576 XS1:i:0:1048576 XS2:i:0:1048576 "
  "HP0:i:1:1048576 HP1:i:0:1048576 HP2:i:0:1048576 XA0:i:0:1048576 XA1:i:0:1048576 XA2:i:0:1048576 "
  "YS0:i:1:16777216 YS1:i:0:16777216 YS2:i:0:16777216 YA0:i:0:16777216 YA1:i:0:16777216 YA2:i:0:16777216",
  "x0:tiso:f32 x1:tiso?:f32 x2:tiso?:f32 nw0:w?:f32 nw1:w?:f32 nw2:w?:f32 freq:c:f64 pos:tiz:i32 n:z?:i32 "
  "y0:tos:f32,f16 y1:tos?:f32,f16 y2:tos?:f32,f16", 128)

K(ATTEND, "attend", "attend.cu",
  "NH:i:1:4096 NKV:i:1:4096 HG:i:1:4096 HD:i:1:1024 VD:i:1:1024 ROWS:i:1:65536 NCTX:i:1:16777216 KV:i:0:2 "
  "SCALE:f:0:1e30 CAP:f:0:1e30 WINDOW:i:0:16777216 SINKS:i:0:1 SPLIT:i:1:1024 CHUNK:i:1:16777216 BUSY:i:0:1024 "
  "MODE:i:0:3 QS:i:1:1048576 OQ:i:0:3 EARLY:i:0:1 "
  "ROPE:i:0:1 ROT:i:0:4096 AF:f:0:1e30 NQ:i:0:1 NK:i:0:1 REPS:f:0:1 ROFF:f:-16:16 TC:i:0:2",
  "q:tios:f32 k:tiosp:f32,f16 v:tiosp:f32,f16 pos:tizp?:i32 n:z?:i32 sinks:wti?:f32 y:tio:f32,a8,a8x2,a8h "
  "part:x?:f32 cnt:x?:i32 kx:tios?:f32 vx:tios?:f32 qnw:w?:f32 knw:w?:f32 freq:c?:f64", 128)

K(FLASH, "flash", "flash.cu",
  "NH:i:1:4096 NKV:i:1:4096 HD:i:16:256 VD:i:16:256 ROWS:i:1:65536 NCTX:i:1:16777216 KV:i:1:2 "
  "SCALE:f:0:1e30 CAP:f:0:1e30 WINDOW:i:0:16777216 SINKS:i:0:1 QS:i:1:1048576 OQ:i:0:3",
  "q:tios:f32 k:tios:f32,f16 v:tios:f32,f16 pos:tiz:i32 n:z?:i32 sinks:wti?:f32 y:tio:f32,a8,a8x2,a8h", 128)

K(ARGMAX, "argmax", "argmax.cu",
  "V:i:1:16777216 ROWS:i:1:65536",
  "x:tios:f32 n:z?:i32 y:to:i32", 1024)

K(ELEM, "elem", "elem.cu",
  "OP:i:0:15 N:i:1:1073741824 ROWS:i:1:65536 ADIV:i:1:1073741824 AMOD:i:1:1073741824 "
  "BDIV:i:1:1073741824 BMOD:i:1:1073741824 BLIT:i:0:1 BVAL:f:-1e30:1e30 P0:f:-1e30:1e30 P1:f:-1e30:1e30",
  "a:tiosw:f32 b:tiosw?:f32 n:z?:i32 y:tio:f32", 256)

K(COPY, "copy", "copy.cu",
  "W:i:1:1048576 XW:i:1:1048576 YW:i:1:1048576 XAT:i:0:1048576 YAT:i:0:1048576 ROWS:i:1:16777216 "
  "SRC:i:0:3 DST:i:0:1 XT:i:0:1 YT:i:0:1 XROWS:i:1:16777216 YROWS:i:1:16777216 RPN:i:1:16777216",
  "x:tiosw:f32,f16 idx:tiz?:i32 n:z?:i32 y:tios:f32,f16", 256)

K(RANGE, "range", "range.cu",
  "ROWS:i:1:16777216",
  "start:tiz:i32 n:z?:i32 y:to:i32", 256)

K(CONV, "sconv", "conv.cu",
  "C:i:1:1048576 KW:i:2:8 ROWS:i:1:65536 XS:i:1:1048576 XA:i:0:1048576 GIN:i:0:1 X2S:i:1:1048576 "
  "X2A:i:0:1048576 BIAS:i:0:1 ACT:i:0:1 GOUT:i:0:1 GS:i:1:1048576 GA:i:0:1048576 OQ:i:0:3",
  "x:tio:f32 x2:tio?:f32 R:s:f32 w:w:f32 b:wtio?:f32 g:tio?:f32 n:z?:i32 y:tio:f32,a8,a8x2,a8h", 128)

K(ROUTE, "route", "route.cu",
  "E:i:1:1024 K:i:1:32 ROWS:i:1:65536 SCORE:i:0:2 BIAS:i:0:1 GROUPS:i:1:64 TG:i:1:64 NORM:i:0:1 "
  "SCALE:f:-1e30:1e30",
  "x:tio:f32 b:wtio?:f32 n:z?:i32 y:tio:f32", 32)

K(MOE, "moe", "moe.cu",
  "PHASE:i:0:1 D:i:1:1048576 FF:i:1:1048576 E:i:1:1024 K:i:1:32 ROWS:i:1:65536 WQ:i:0:1 XQ:i:0:2 HQ:i:0:2 "
  "ACT:i:0:2 ALPHA:f:0:1e30 LIMIT:f:0:1e30 GB:i:0:1 DB:i:0:1 RES:i:0:1 SH:i:0:16 GSH:i:0:1 XEARLY:i:0:1",
  "Wg:w?:f32,q8 Wu:w?:f32,q8 Wd:w?:f32,q8 x:tio?:f32 rt:tio:f32 bg:w?:f32 bu:w?:f32 bd:w?:f32 n:z?:i32 "
  "h:x:f32 y:tio?:f32 r:tio?:f32 Wsg:w?:f32,q8 Wsu:w?:f32,q8 Wsd:w?:f32,q8 gs:tio?:f32", 256)

K(MMA, "mma", "mma.cu",
  "K:i:32:1048576 PARTS:i:1:4 N0:i:1:1048576 N1:i:0:1048576 N2:i:0:1048576 N3:i:0:1048576 "
  "XIN:i:0:2 XQ:i:1:2 ROWS:i:1:65536 BM:i:64:128 NORM:i:0:1 EPS:f:0:1 OFFSET:f:-16:16 NW:i:0:1 "
  "BIAS:i:0:15 RES:i:0:15 GATE:i:0:2 CAP:f:0:1e30 OQ:i:0:3 SK:i:1:8 GS:i:0:1",
  "W0:w:q8 W1:w?:q8 W2:w?:q8 W3:w?:q8 x:tiso:f32,a8,a8x2 nw:w?:f32 n:z?:i32 "
  "y0:tos:f32,a8,a8x2,a8h y1:tos?:f32 y2:tos?:f32 y3:tos?:f32 "
  "b0:w?:f32 b1:w?:f32 b2:w?:f32 b3:w?:f32 r0:tio?:f32 r1:tio?:f32 r2:tio?:f32 r3:tio?:f32 gs:tio?:f32", 256)

K(MMH, "mmh", "mmh.cu",
  "K:i:256:1048576 PARTS:i:1:4 N0:i:1:1048576 N1:i:0:1048576 N2:i:0:1048576 N3:i:0:1048576 "
  "XIN:i:1:3 ROWS:i:1:65536 BN:i:128:256 BIAS:i:0:15 RES:i:0:15 GATE:i:0:2 CAP:f:0:1e30 OQ:i:0:3 GS:i:0:1 SK:i:1:16 "
  "TAIL:i:0:65535 TM:i:0:256 CY:i:0:65535",
  "W0:w:q8 W1:w?:q8 W2:w?:q8 W3:w?:q8 x:tiso:a8,a8h n:z?:i32 "
  "y0:tos:f32,a8,a8x2,a8h y1:tos?:f32 y2:tos?:f32 y3:tos?:f32 "
  "b0:w?:f32 b1:w?:f32 b2:w?:f32 b3:w?:f32 r0:tio?:f32 r1:tio?:f32 r2:tio?:f32 r3:tio?:f32 gs:tio?:f32 "
  "part:x?:f32 cnt:x?:i32", 256)

K(MMI, "mmi", "mmi.cu",
  "K:i:256:1048576 PARTS:i:1:4 N0:i:1:1048576 N1:i:0:1048576 N2:i:0:1048576 N3:i:0:1048576 "
  "XQ:i:1:1 ROWS:i:1:64 NR:i:16:64 BIAS:i:0:15 RES:i:0:15 GATE:i:0:2 CAP:f:0:1e30 OQ:i:0:2 GS:i:0:1 "
  "GRID:i:1:1048576 STAGES:i:2:6",
  "W0:w:q8 W1:w?:q8 W2:w?:q8 W3:w?:q8 x:tiso:a8 n:z?:i32 "
  "y0:tos:f32,a8,a8x2 y1:tos?:f32 y2:tos?:f32 y3:tos?:f32 "
  "b0:w?:f32 b1:w?:f32 b2:w?:f32 b3:w?:f32 r0:tio?:f32 r1:tio?:f32 r2:tio?:f32 r3:tio?:f32 gs:tio?:f32 "
  "part:x:f32 cnt:x:i32", 512)

K(MMV, "mmv", "mmv.cu",
  "K:i:32:1048576 PARTS:i:1:4 N0:i:1:1048576 N1:i:0:1048576 N2:i:0:1048576 N3:i:0:1048576 "
  "XQ:i:1:2 ROWS:i:1:65536 NT:i:1:4 BIAS:i:0:15 RES:i:0:15 GATE:i:0:2 CAP:f:0:1e30 OQ:i:0:2 GRID:i:1:1048576 "
  "XS:i:0:2 DEPTH:i:2:8 GS:i:0:1 SQ:i:0:2 RN:i:0:1 EPS:f:0:1 OFFSET:f:-16:16 NW:i:0:1",
  "W0:w:q8 W1:w?:q8 W2:w?:q8 W3:w?:q8 x:tiso:a8,a8x2 n:z?:i32 "
  "y0:tos:f32,a8,a8x2 y1:tos?:f32 y2:tos?:f32 y3:tos?:f32 "
  "b0:w?:f32 b1:w?:f32 b2:w?:f32 b3:w?:f32 r0:tio?:f32 r1:tio?:f32 r2:tio?:f32 r3:tio?:f32 gs:tio?:f32 "
  "nw:w?:f32 q:t?:a8,a8x2 so:t?:f32 ss:t?:f32", 384)

K(LATENT, "latent", "latent.cu",
  "NH:i:1:1024 NOPE:i:1:1024 QW:i:1:2048 ROPE:i:1:1024 LORA:i:1:1024 VD:i:1:1024 ROWS:i:1:65536 "
  "NCTX:i:1:16777216 MODE:i:0:2 KQ:i:0:1 VQ:i:0:1 SCALE:f:0:1e30 SPLIT:i:1:1024 CHUNK:i:1:16777216",
  "qr:tios:f32 qp:tios:f32 kc:tios:f32 wk:w:f32,q8 wv:w:f32,q8 pos:tiz?:i32 n:z?:i32 y:tio:f32 "
  "part:x?:f32 cnt:x?:i32", 256)

K(LATENT_EXPAND, "latent_expand", "latent_expand.cu",
  "NH:i:1:1024 NOPE:i:1:1024 QW:i:1:2048 ROPE:i:1:1024 LORA:i:1:1024 VD:i:1:1024 ROWS:i:1:65536 "
  "NCTX:i:1:16777216 MODE:i:1:1 KQ:i:0:1 VQ:i:0:1",
  "qr:tios:f32 qp:tios:f32 kc:tios:f32 wk:w:f32,q8 wv:w:f32,q8 pos:tiz?:i32 n:z?:i32 k:t:f32 v:t:f32 q:t:f32", 256)

K(DELTA, "delta", "delta.cu",
  "NK:i:1:4096 NV:i:1:4096 DK:i:4:256 DV:i:1:1024 ROWS:i:1:65536 QX:i:1:1048576 QA:i:0:1048576 "
  "KX:i:1:1048576 KA:i:0:1048576 VX:i:1:1048576 VA:i:0:1048576 QN:i:0:1 KN:i:0:1 EPS:f:0:1 "
  "QSC:f:-1e30:1e30 KSC:f:-1e30:1e30 GF:i:0:1 BF:i:0:1",
  "q:tio:f32 k:tio:f32 v:tio:f32 g:tio:f32 beta:tio:f32 S:s:f32 n:z?:i32 y:tio:f32 ga:w?:f32", 128)
