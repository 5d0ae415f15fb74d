"""The CTest fixture fixtures.gloo_captures (issue #53): each capture of
chakra_test.SHARED_CAPTURES made once, under the build's preload, into
CHAKRASHIM_TEST_CAPTURES/NAME (trace/ and made.json: the stamp of what made
it, the ranks' exit statuses and outputs). The tests that only read such a
capture copy it (chakra_test.gloo_job_capture) instead of making their own.

  make_captures.py [NAME...]      (default: all)

A capture is published whole or not at all (made in NAME.tmp, then renamed),
and the old ones go first, so that a test never copies one made by another
build. Where gloo could not connect three times, the capture is left out
and said (its tests make their own); a job that fails fails this fixture
with its output, and its tests, which then make their own, fail with their
own assertions.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chakra_test as ct  # noqa: E402


def main(names):
    if not ct.CAPTURES or not ct.PRELOAD:
        print("make_captures: CHAKRASHIM_TEST_CAPTURES and CHAKRASHIM_TEST_PRELOAD must be set", file=sys.stderr)
        return 2
    unknown = [n for n in names if n not in ct.SHARED_CAPTURES]
    if unknown:
        print("make_captures: no capture named %s (%s)" % (", ".join(unknown), ", ".join(ct.SHARED_CAPTURES)),
              file=sys.stderr)
        return 2
    os.makedirs(ct.CAPTURES, exist_ok=True)
    failed = []
    for name in names or list(ct.SHARED_CAPTURES):
        job, args, start, end, ranks = ct.SHARED_CAPTURES[name]
        final, staging = os.path.join(ct.CAPTURES, name), os.path.join(ct.CAPTURES, name + ".tmp")
        for d in (final, staging):
            shutil.rmtree(d, ignore_errors=True)
        trace = os.path.join(staging, "trace")
        os.makedirs(trace)
        stamp = ct.capture_stamp(job)
        codes, outputs = ct.run_gloo_job(trace, job, args, start, end, ranks)
        if ct.gloo_could_not_connect(codes, outputs):
            print("%s: left out: gloo could not connect on loopback, three times (its tests capture their own)"
                  % name)
            shutil.rmtree(staging, ignore_errors=True)
            continue
        if codes != [0] * ranks:
            print("%s: FAILED: exit statuses %s\n%s" % (name, codes, "\n".join(outputs)))
            failed.append(name)
            shutil.rmtree(staging, ignore_errors=True)
            continue
        with open(os.path.join(staging, "made.json"), "w") as f:
            json.dump({"job": job, "args": list(args), "start": start, "end": end, "stamp": stamp,
                       "codes": codes, "outputs": outputs}, f)
        os.rename(staging, final)
        print("%s: %s %s, steps %d-%d on %d ranks, in %s" % (name, job, " ".join(args), start, end, ranks, final))
    return 1 if failed else 0


if __name__ == "__main__":
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__)
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
