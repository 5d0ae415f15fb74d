#!/usr/bin/env python3
"""Find what scripts/gpu-check.sh builds with, and print it as KEY=VALUE lines.

  python3 locate.py [--no-torch]

Run with the job's Python: torch, and the CUDA wheels beside it, are found
through it. Keys (an empty value: not found):

  python, python_version                 the real interpreter (not pyenv's shim)
  torch_version, torch_cuda, torch_dir   torch.__version__, torch.version.cuda ('' on a CPU build)
  torch_cxx11_abi                        0 or 1
  cuda_available, gpu_name, gpu_arch     torch.cuda: 1/0, the device name, e.g. 9.0
  nvcc, nvcc_version, cuda_root          the real nvcc (wrappers followed through its own -v output)
  cuda_include, cupti_include            folders with cuda_runtime_api.h and cupti_activity.h
  cupti_has_cuda_h                       1 when cupti_include has cuda.h too
  cudart, nvrtc                          libcudart and libnvrtc (the toolkit's, else the pip wheels')
  libz                                   the system libz.so.1 (linked; its header is carried)

The CUDA toolkit may be a standard one (/usr/local/cuda, CUPTI under
extras/CUPTI), one assembled from NVIDIA's pip wheels (only versioned
libfoo.so.N, nvcc behind a wrapper script), or the wheels inside the Python
environment (site-packages/nvidia/cu13/...): each is searched.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(cmd, timeout=60):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return 1, str(e)


def nvidia_wheel_dirs():
    """site-packages/nvidia/* folders of this Python (the CUDA pip wheels)."""
    dirs = []
    try:
        import nvidia  # a namespace package when any nvidia-* wheel is installed
        for base in list(getattr(nvidia, "__path__", [])):
            dirs += sorted(d for d in glob.glob(os.path.join(base, "*")) if os.path.isdir(d))
    except ImportError:
        pass
    return dirs


def real_nvcc(nvcc):
    """nvcc's own folder, from `nvcc -v --dryrun` (_HERE_), so that a wrapper
    script or symlink on PATH leads to the toolkit it runs."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "x.cu")
        open(src, "w").close()
        _, out = run([nvcc, "-v", "--dryrun", "-E", "-x", "cu", src, "-o", os.path.join(tmp, "x.i")])
    m = re.search(r"^#\$ _HERE_=(.+)$", out, re.M)
    if m and os.path.isfile(os.path.join(m.group(1).strip(), "nvcc")):
        return os.path.join(m.group(1).strip(), "nvcc")
    return os.path.realpath(nvcc)


def find_nvcc():
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "bin", "nvcc"))
    if shutil.which("nvcc"):
        candidates.append(shutil.which("nvcc"))
    candidates += sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)
    candidates += [os.path.join(d, "bin", "nvcc") for d in nvidia_wheel_dirs()]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            nvcc = real_nvcc(c)
            if os.path.isfile(nvcc):
                return nvcc
    return ""


def first_dir_with(dirs, header):
    for d in dirs:
        if os.path.isfile(os.path.join(d, header)):
            return d
    return ""


def find_lib(dirs, name):
    """lib<name>.so in the first folder that has it, else the highest lib<name>.so.N."""
    pattern = re.compile(r"^lib%s\.so(\.\d+)*$" % re.escape(name))
    for d in dirs:
        if os.path.isfile(os.path.join(d, "lib%s.so" % name)):
            return os.path.join(d, "lib%s.so" % name)
    for d in dirs:
        found = sorted((f for f in os.listdir(d) if pattern.match(f)) if os.path.isdir(d) else [],
                       key=lambda f: [int(x) for x in f.split(".so")[1].split(".") if x.isdigit()])
        if found:
            return os.path.join(d, found[-1])
    return ""


def find_libz():
    for ldconfig in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        if shutil.which(ldconfig) or os.path.isfile(ldconfig):
            rc, out = run([ldconfig, "-p"])
            found = [(flags, path) for flags, path in re.findall(r"^\s*libz\.so\.1 \(([^)]*)\) => (\S+)$", out, re.M)
                     if os.path.isfile(path)]
            # This machine's word size first: 'libc6,x86-64' over a 32-bit 'libc6'.
            found.sort(key=lambda fp: not any(k in fp[0] for k in ("x86-64", "64bit", "AArch64")))
            if rc == 0 and found:
                return found[0][1]
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib"):
        if os.path.isfile(os.path.join(d, "libz.so.1")):
            return os.path.join(d, "libz.so.1")
    import zlib  # noqa: F401  the interpreter's own zlib module maps the library it uses
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"/libz\.so\.1(\.[\d.]+)?$", path) and os.path.isfile(path):
                return path
    return ""


def torch_facts(out):
    import torch
    out["torch_version"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda or ""
    out["torch_dir"] = os.path.dirname(torch.__file__)
    out["torch_cxx11_abi"] = str(int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))))
    out["cuda_available"] = "1" if torch.cuda.is_available() else "0"
    if out["cuda_available"] == "1":
        out["gpu_name"] = torch.cuda.get_device_name(0)
        out["gpu_arch"] = "%d.%d" % torch.cuda.get_device_capability(0)


def main():
    out = {k: "" for k in ("python", "python_version", "torch_version", "torch_cuda", "torch_dir",
                           "torch_cxx11_abi", "cuda_available", "gpu_name", "gpu_arch", "nvcc",
                           "nvcc_version", "cuda_root", "cuda_include", "cupti_include", "cudart",
                           "cupti_has_cuda_h", "nvrtc", "libz")}
    out["python"] = sys.executable
    out["python_version"] = "%d.%d.%d" % sys.version_info[:3]
    if "--no-torch" not in sys.argv:
        try:
            torch_facts(out)
        except Exception as e:  # reported by the caller as 'torch not importable'
            print("torch_error=%s" % str(e).replace("\n", " "))
    wheels = nvidia_wheel_dirs()
    out["nvcc"] = find_nvcc()
    roots = []
    if out["nvcc"]:
        out["cuda_root"] = os.path.dirname(os.path.dirname(out["nvcc"]))
        roots.append(out["cuda_root"])
        _, text = run([out["nvcc"], "--version"])
        m = re.search(r"release ([\d.]+), V([\d.]+)", text)
        out["nvcc_version"] = m.group(2) if m else ""
    roots += [d for d in sorted(glob.glob("/usr/local/cuda*"), reverse=True) if d not in roots]
    arch = "targets/%s-linux" % os.uname().machine
    include_dirs = [os.path.join(r, sub) for r in roots for sub in ("include", arch + "/include")]
    out["cuda_include"] = first_dir_with(include_dirs, "cuda_runtime_api.h")
    cupti_dirs = ([os.path.join(r, sub) for r in roots
                   for sub in ("include", arch + "/include", "extras/CUPTI/include")] +
                  [os.path.join(w, "include") for w in wheels])
    # The collector adds only this folder, and CUPTI's headers include cuda.h:
    # one that has both is best (a standard toolkit keeps CUPTI apart, in
    # extras/CUPTI/include; gpu-check.sh then adds cuda_include after all).
    both = [d for d in cupti_dirs if os.path.isfile(os.path.join(d, "cuda.h"))]
    out["cupti_include"] = first_dir_with(both, "cupti_activity.h") or first_dir_with(cupti_dirs, "cupti_activity.h")
    out["cupti_has_cuda_h"] = "1" if os.path.isfile(os.path.join(out["cupti_include"], "cuda.h")) else "0"
    lib_dirs = ([os.path.join(r, sub) for r in roots for sub in ("lib64", "lib", arch + "/lib")] +
                [os.path.join(w, "lib") for w in wheels])
    out["cudart"] = find_lib(lib_dirs, "cudart")
    out["nvrtc"] = find_lib(lib_dirs, "nvrtc")
    out["libz"] = find_libz()
    for key, value in out.items():
        print("%s=%s" % (key, value.replace("\n", " ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
