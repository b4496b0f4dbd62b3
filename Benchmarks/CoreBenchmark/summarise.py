#!/usr/bin/env python3
# Medians and ranges of core-benchmark outputs appended to files (farm-bench ... >>FILE): summarise.py base.txt new.txt
import re,sys,statistics
for f in sys.argv[1:]:
    t=open(f).read().splitlines()
    rows={"state machine":[], "no subscriber":[], "Prometheus":[], "100 batched":[], "200 device":[]}
    for i,l in enumerate(t):
        if "pure state machine" in l:
            rows["state machine"].append(int(re.search(r"(\d+) reports/s",t[i+1]).group(1)))
        for k in ["Prometheus","100 batched","200 device"]:
            if k in l: rows[k].append(int(re.search(r"(\d+) reports/s",l).group(1)))
        if re.match(r"\s+no subscriber:\s+\d",l): rows["no subscriber"].append(int(re.search(r"(\d+) reports/s",l).group(1)))
    print("==",f)
    for k,v in rows.items():
        if v: print(f"  {k:15s} median {int(statistics.median(v)):>8} range {min(v)}-{max(v)} n={len(v)}")
