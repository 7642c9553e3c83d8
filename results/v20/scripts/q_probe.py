"""The kernel-choice probe on the shapes v20's rules left unmeasured: FP8 q=8 at 1,024 keys, q=5 and 6 drafts."""
import sys
sys.path.insert(0, "scripts")
import unified_kernel_choice_probe as probe
probe.SHAPES = [("mtp", 20, 8, 16, 1, 1024, "fp8"), ("mtp", 20, 8, 16, 1, 1024, "bf16")] + \
    [("mtp", 20, q, 16, 1, kv, pages) for q in (5, 6) for pages in ("fp8", "bf16") for kv in (2048, 32768)]
sys.exit(probe.main())
