"""v42, offline (no GPU): build/v42's probes of the warpgroup-MMA kernel (make_variants.py: base, bias, peel) through
v39's `offline_lazy.report`: compiled for sm90 as the H200 table's profiles launch them (BF16 MTP verify, and FP8
pages at the rule's profile); per variant and form, registers, stack, whether ptxas serialized the wgmma
instructions, the KV loop's instruction count (`compile_report.hot_loop`) and its FMUL / BAR / LDS / STS counts; then
every loop of each variant's BF16 16q/1kv and FP8 builds (a backward branch's body), whose instruction counts
perf-notes v42 item 1 cites: the peel form has two, the steps before the first query and the rest.
Usage: TRITON_INTERPRET=0 PYTHONPATH=.:build/v42 python3 results/v42/scripts/offline_peel.py"""
import collections
import importlib
import re
import sys

sys.path.insert(0, "results/v39/scripts")
sys.path.insert(0, "scripts")
from offline_lazy import FORMS, report  # noqa: E402
import compile_report as cr  # noqa: E402

OPS = ("FMUL", "FFMA", "FSEL", "ISETP", "LOP3", "IADD3")


def loops(sass: str):
    """(first address, instruction count, counts of OPS) of each backward branch's body of 100 or more instructions."""
    lines = [line for line in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", line)]
    addr = [int(re.match(r"\s+/\*([0-9a-f]+)\*/", line).group(1), 16) for line in lines]
    for line, at in zip(lines, addr):
        target = re.search(r"BRA (0x[0-9a-f]+)", line)
        if target and int(target.group(1), 16) < at:
            body = [x for x, a in zip(lines, addr) if int(target.group(1), 16) <= a <= at]
            ops = collections.Counter(re.sub(r"^\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", x).split()[0].split(".")[0]
                                      for x in body)
            if len(body) >= 100:
                yield hex(int(target.group(1), 16)), len(body), {op: ops[op] for op in OPS}


if __name__ == "__main__":
    report(("base", "bias", "peel"))
    for variant in ("base", "peel"):
        cr.verify_wgmma_kernel = importlib.import_module(f"vw_{variant}").verify_wgmma_kernel
        for form in ("bf16 MTP 16q/1kv (m64/n16/s13/st4/ahead)", "fp8 verify (m64/n16/s13/st5)"):
            kv, group, profile = FORMS[form]
            sass = cr.compile_verify_wgmma("bf16", kv, group, 256, 16, profile, True, sass=True)["sass"]
            print(variant, form, list(loops(sass)), flush=True)
