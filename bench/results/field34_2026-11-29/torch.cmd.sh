PYTHONPATH=$PWD/src /work/main/.venv/bin/python -m perflab run --store /tmp/field34-store.db \
  --stmt "f(x)" --setup "import os, torch; torch.set_num_threads(1); x = torch.randn(100_000); f = torch.compile(torch.relu) if os.environ.get('COMPILED') else torch.relu; f(x)" \
  --variant eager --variant "compiled env.COMPILED=1" \
  -m time,instructions,profile,asm --budget 120 --verbose --json bench/results/field34_2026-11-29/torch.json
