device: NVIDIA H100 80GB HBM3 (132 multiprocessors); read ceiling 3074.8 GB/s (a streaming read of 4.3 GB)
-: Gemma-2-2B decode_step, numerics q8, fuse_quant
   pos          bytes   ms/step           (p10-p90)     tok/s      GB/s  ceiling
   512     2887500800    1.9325     (1.9242-1.9416)     517.5    1494.2    48.6%
  8192     4087071744    2.4476     (2.4425-2.4549)     408.6    1669.8    54.3%

launches at position 512, each alone (the median of 20), by time:
count  kernel                                      ms   share          bytes      GB/s  ceiling
   26  gemv 18432x2304/gated q8a8              0.6509   33.7%     1174358016    1804.2    58.7%
   26  gemv 2304x9216 q8a8                     0.3537   18.3%      586849536    1659.1    54.0%
    1  gemv 256000x2304 q8a8                   0.3273   16.9%      626724864    1914.8    62.3%
   25  gemv 4096x2304/parts q8a8               0.2934   15.2%      251827200     858.3    27.9%
   13  attend 8h/4kv x256 split 512            0.2160   11.2%       54752308     253.5     8.2%
   13  attend 8h/4kv x256 split 512            0.2146   11.1%       54752308     255.1     8.3%
   26  gemv 2304x2048 q8a8                     0.1809    9.4%      130411008     720.9    23.4%
    1  gemv 4096x2304/parts q8a8               0.0107    0.6%       10045440     941.3    30.6%
    1  embed 2304                              0.0052    0.3%           2452       0.5     0.0%
launches alone: 2.2527 ms; the step: 1.9325 ms; gap (between and around launches): -0.3202 ms

launches at position 8192, each alone (the median of 20), by time:
count  kernel                                      ms   share          bytes      GB/s  ceiling
   26  gemv 18432x2304/gated q8a8              0.6506   26.6%     1174358016    1804.9    58.7%
   13  attend 8h/4kv x256 split 512            0.5676   23.2%      872641588    1537.6    50.0%
   13  attend 8h/4kv x256 split 512            0.3609   14.7%      436433972    1209.1    39.3%
   26  gemv 2304x9216 q8a8                     0.3533   14.4%      586849536    1661.1    54.0%
    1  gemv 256000x2304 q8a8                   0.3269   13.4%      626724864    1917.0    62.3%
   25  gemv 4096x2304/parts q8a8               0.2933   12.0%      251827200     858.7    27.9%
   26  gemv 2304x2048 q8a8                     0.1809    7.4%      130411008     720.9    23.4%
    1  gemv 4096x2304/parts q8a8               0.0107    0.4%       10045440     939.9    30.6%
    1  embed 2304                              0.0052    0.2%           2452       0.5     0.0%
launches alone: 2.7494 ms; the step: 2.4476 ms; gap (between and around launches): -0.3018 ms
