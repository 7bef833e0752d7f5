#!/usr/bin/env bash
# session 42 call F (4 x H200): the flat end cells: the multi-device / stream cuda tests,
# p42f.py alternated with main's src (.carry/old42/src), bench/scaling.py streamed 1 and 4.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
T0=$(date +%s)
PYTHONPATH=$R/src:/tmp/site timeout 230 python3 -m pytest -q -x -m cuda -p no:cacheprovider tests/test_cuda_stream.py tests/test_cuda_search.py tests/test_concurrency.py > $OUT/tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - T0 ))"; tail -3 $OUT/tests.txt
for arm in new old new old; do
  P=$R/src:/tmp/site; [ $arm = old ] && P=$R/.carry/old42/src:/tmp/site
  PYTHONPATH=$P timeout 80 python3 .carry/p42/p42f.py $arm >> $OUT/ab.jsonl 2> $OUT/ab_$arm.err
  echo "$arm rc=$? t=$(( $(date +%s) - T0 ))"; tail -1 $OUT/ab.jsonl | cut -c1-400
done
PYTHONPATH=$R/src:/tmp/site timeout 120 python3 bench/scaling.py --gpus 1,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method streamed --streamed-limit gpu --repeat 2 --out $OUT/sc_streamed.jsonl > $OUT/sc.txt 2>&1
echo "scaling rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for l in open('$OUT/sc_streamed.jsonl'):
    r = json.loads(l); print(r['params']['gpus'], r['method'], r['seconds'], r.get('runs'), r.get('speedup'), r.get('same_hits'))
"
