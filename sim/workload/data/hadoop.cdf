# Hadoop flow sizes at Facebook (A. Roy et al., "Inside the Social Network's (Datacenter)
# Network", SIGCOMM 2015), as the HPCC simulator ships it
# (github.com/alibaba-edu/High-Precision-Congestion-Control, traffic_gen/FbHdp_distribution.txt,
# commit 9cf8b9e8, where the cdf is in percent).
# Columns: flow size in bytes, cumulative probability (here 0..1: the percent divided by 100).
# Sizes between points are drawn by linear interpolation, as that simulator's generator does.
0 0
100 0.01
200 0.02
300 0.05
350 0.15
400 0.20
500 0.30
600 0.40
700 0.50
1000 0.60
2000 0.67
7000 0.70
30000 0.72
50000 0.82
80000 0.87
120000 0.90
300000 0.95
1000000 0.975
2000000 0.99
10000000 1
