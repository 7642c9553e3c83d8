#!/usr/bin/env bash
# v42, the last call: c7.sh on an H200, c6.sh on any other GPU
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash results/v42/scripts/c7.sh
fi
exec bash results/v42/scripts/c6.sh
