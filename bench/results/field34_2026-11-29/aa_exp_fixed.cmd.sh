PYTHONPATH=$PWD/src /work/main/.venv/bin/python -m perflab run --store /tmp/field34-store.db \
  --stmt "np.exp(a, out=c)" --setup "import numpy as np; a = np.random.default_rng(0).random(100_000, dtype=np.float32); c = np.empty_like(a)" \
  --variant A --variant B \
  -m time,instructions,profile,asm --budget 60 --verbose --json bench/results/field34_2026-11-29/aa_exp_fixed.json
