device: NVIDIA H100 80GB HBM3 (132 multiprocessors); read ceiling 3074.2 GB/s (a streaming read of 4.3 GB)
-: Gemma-2-2B decode_step, numerics q8x2, fuse_quant
   pos          bytes   ms/step           (p10-p90)     tok/s      GB/s  ceiling
   512     2887500800    1.9848     (1.9792-1.9922)     503.8    1454.8    47.3%
  8192     4087071744    2.5143     (2.5091-2.5212)     397.7    1625.5    52.9%

launches at position 512, each alone (the median of 20), by time:
count  kernel                                      ms   share          bytes      GB/s  ceiling
   26  gemv 18432x2304/gated q8a8x2            0.6814   34.3%     1174358016    1723.5    56.1%
   26  gemv 2304x9216 q8a8x2                   0.3572   18.0%      587089152    1643.7    53.5%
    1  gemv 256000x2304 q8a8x2                 0.3311   16.7%      626724864    1893.0    61.6%
   25  gemv 4096x2304/parts q8a8x2             0.3111   15.7%      251827200     809.5    26.3%
   13  attend 8h/4kv x256 split 512            0.2230   11.2%       54752308     245.5     8.0%
   13  attend 8h/4kv x256 split 512            0.2217   11.2%       54752308     247.0     8.0%
   26  gemv 2304x2048 q8a8x2                   0.1886    9.5%      130464256     691.6    22.5%
    1  gemv 4096x2304/parts q8a8x2             0.0113    0.6%       10045440     889.3    28.9%
    1  embed 2304                              0.0052    0.3%           2452       0.5     0.0%
launches alone: 2.3306 ms; the step: 1.9848 ms; gap (between and around launches): -0.3458 ms

launches at position 8192, each alone (the median of 20), by time:
count  kernel                                      ms   share          bytes      GB/s  ceiling
   26  gemv 18432x2304/gated q8a8x2            0.6809   27.1%     1174358016    1724.7    56.1%
   13  attend 8h/4kv x256 split 512            0.5681   22.6%      872641588    1536.1    50.0%
   13  attend 8h/4kv x256 split 512            0.3724   14.8%      436433972    1171.9    38.1%
   26  gemv 2304x9216 q8a8x2                   0.3573   14.2%      587089152    1643.2    53.5%
    1  gemv 256000x2304 q8a8x2                 0.3312   13.2%      626724864    1892.1    61.5%
   25  gemv 4096x2304/parts q8a8x2             0.3108   12.4%      251827200     810.2    26.4%
   26  gemv 2304x2048 q8a8x2                   0.1886    7.5%      130464256     691.7    22.5%
    1  gemv 4096x2304/parts q8a8x2             0.0113    0.4%       10045440     891.8    29.0%
    1  embed 2304                              0.0052    0.2%           2452       0.5     0.0%
launches alone: 2.8258 ms; the step: 2.5143 ms; gap (between and around launches): -0.3116 ms
