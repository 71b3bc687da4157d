# Web search flow sizes: the DCTCP paper's measured production cluster distribution
# (M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Figure 4), as the HPCC
# simulator ships it (github.com/alibaba-edu/High-Precision-Congestion-Control,
# traffic_gen/WebSearch_distribution.txt, commit 9cf8b9e8, where the cdf is in percent).
# Columns: flow size in bytes, cumulative probability (here 0..1: the percent divided by 100).
# Sizes between points are drawn by linear interpolation, as that simulator's generator does.
0 0
10000 0.15
20000 0.20
30000 0.30
50000 0.40
80000 0.53
200000 0.60
1000000 0.70
2000000 0.80
5000000 0.90
10000000 0.97
30000000 1
