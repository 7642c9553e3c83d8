"""Which reset makes the default CUDA generator usable after a failed graph capture? One subprocess per method."""
import subprocess, sys, json
CODE = r'''
import sys, torch, triton.testing
method = sys.argv[1]
x = torch.ones(4, device="cuda")
def step():
    x.sum().item()  # host sync: capture fails
try:
    triton.testing.do_bench_cudagraph(step, rep=5)
    captured = True
except RuntimeError as exc:
    captured = False
torch.cuda.synchronize()
broken = None
try:
    torch.randn(4, device="cuda"); broken = False
except RuntimeError as exc:
    broken = str(exc)[:80]
g = torch.cuda.default_generators[torch.cuda.current_device()]
if method == "clone":
    g.graphsafe_set_state(g.clone_state())
elif method == "seed":
    torch.cuda.manual_seed(1234)
elif method == "setstate":
    g.set_state(g.get_state())
after = None
try:
    torch.randn(4, device="cuda"); after = "ok"
except RuntimeError as exc:
    after = str(exc)[:80]
print(__import__("json").dumps({"method": method, "captured": captured, "broken": broken, "after": after}))
'''
for m in ("none", "clone", "seed", "setstate"):
    r = subprocess.run([sys.executable, "-c", CODE, m], capture_output=True, text=True, timeout=120)
    print(r.stdout.strip() or r.stderr[-400:], flush=True)
