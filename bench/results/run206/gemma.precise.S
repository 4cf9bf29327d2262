device: NVIDIA H100 80GB HBM3 (132 multiprocessors); read ceiling 3076.4 GB/s (a streaming read of 4.3 GB)
-: Gemma-2-2B decode_step, numerics precise
   pos          bytes   ms/step           (p10-p90)     tok/s      GB/s  ceiling
   512     2887500800    2.7208     (2.7078-2.7335)     367.5    1061.3    34.5%
  8192     4087071744    3.2771     (3.2647-3.2919)     305.1    1247.2    40.5%

launches at position 512, each alone (the median of 20), by time:
count  kernel                                      ms   share          bytes      GB/s  ceiling
   26  gemv 18432x2304/gated q8f32             0.8397   30.9%     1174358016    1398.6    45.5%
   26  gemv 2304x9216 q8f32                    0.7876   28.9%      587538432     746.0    24.2%
    1  gemv 256000x2304 q8f32                  0.4740   17.4%      626724864    1322.2    43.0%
   25  gemv 4096x2304/parts q8f32              0.4099   15.1%      251827200     614.3    20.0%
   26  gemv 2304x2048 q8f32                    0.2944   10.8%      130564096     443.5    14.4%
   13  attend 8h/4kv x256 split 512            0.2035    7.5%       54752308     269.1     8.7%
   13  attend 8h/4kv x256 split 512            0.2019    7.4%       54752308     271.2     8.8%
    1  gemv 4096x2304/parts q8f32              0.0150    0.6%       10045440     670.8    21.8%
    1  embed 2304                              0.0051    0.2%           2452       0.5     0.0%
launches alone: 3.2311 ms; the step: 2.7208 ms; gap (between and around launches): -0.5102 ms

launches at position 8192, each alone (the median of 20), by time:
count  kernel                                      ms   share          bytes      GB/s  ceiling
   26  gemv 18432x2304/gated q8f32             0.8392   25.6%     1174358016    1399.4    45.5%
   26  gemv 2304x9216 q8f32                    0.7868   24.0%      587538432     746.7    24.3%
   13  attend 8h/4kv x256 split 512            0.5492   16.8%      872641588    1589.1    51.7%
    1  gemv 256000x2304 q8f32                  0.4744   14.5%      626724864    1321.2    42.9%
   25  gemv 4096x2304/parts q8f32              0.4094   12.5%      251827200     615.1    20.0%
   13  attend 8h/4kv x256 split 512            0.3514   10.7%      436433972    1242.0    40.4%
   26  gemv 2304x2048 q8f32                    0.2946    9.0%      130564096     443.2    14.4%
    1  gemv 4096x2304/parts q8f32              0.0150    0.5%       10045440     670.8    21.8%
    1  embed 2304                              0.0050    0.2%           2452       0.5     0.0%
launches alone: 3.7249 ms; the step: 3.2771 ms; gap (between and around launches): -0.4478 ms
