gemma2 precise decode_step x64     64 rows  max rel err 6.17e-07  (bound 1e-04)  greedy 64/64  ok
gemma2 precise generate 40+16      16 rows  max rel err 2.94e-06  (bound 1e-04)  greedy 16/16  ok
gemma2 precise decode_batch 4 x16  72 rows (70 compared)  max rel err 3.64e-06  (bound 1e-04)  greedy 70/70  ok
gemma2 q8x2 decode_step x64        quantization alone 9.41e-05  rounding alone 6.75e-05..1.07e-04 (3)  64 rows  max rel err 1.24e-04  (bound 1e-03)  greedy 64/64  ok
gemma2 q8x2 generate 40+16         quantization alone 4.76e-04  rounding alone 2.16e-04..5.13e-04 (3)  16 rows  max rel err 2.49e-04  (bound 1e-03)  greedy 16/16  ok
gemma2 q8x2 decode_batch 4 x16     quantization alone 2.68e-04  rounding alone 3.11e-04..4.21e-04 (3)  72 rows (70 compared)  max rel err 1.93e-04  (bound 1e-03)  greedy 70/70  ok
gemma2 q8 decode_step x64          quantization alone 1.17e-01  rounding alone 2.43e-02..2.43e-02 (3)  64 rows  max rel err 5.06e-02  (bound 2e-02)  greedy 64/64  FAIL
gemma2 q8 generate 40+16           quantization alone 1.26e-01  rounding alone 9.74e-03..1.03e-02 (3)  16 rows  max rel err 1.47e-02  (bound 2e-02)  greedy 16/16  ok
gemma2 q8 decode_batch 4 x16       quantization alone 8.44e-02  rounding alone 2.90e-07..1.58e-02 (3)  72 rows (70 compared)  max rel err 1.41e-02  (bound 2e-02)  greedy 70/70  ok
lane: 8 passed, 1 failed
