# builds: cd /tmp/field34-cxx && g++ -O2 -o O2/clones clones.cpp && g++ -O3 -flto -o O3/clones clones.cpp  (g++ 12.2)
PYTHONPATH=$PWD/src /work/main/.venv/bin/python -m perflab run --store /tmp/field34-store.db \
  --cmd "./clones 5000" --variant "O2 cwd=/tmp/field34-cxx/O2" --variant "O3lto cwd=/tmp/field34-cxx/O3" \
  -m time,instructions,profile,asm --budget 60 --verbose --json bench/results/field34_2026-11-29/cxx.json
