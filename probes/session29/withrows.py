"""withrows.py R SCRIPT ARGS...: run SCRIPT (as __main__) with cuda traceback END_ROWS = R."""
import importlib, runpy, sys
r, script = int(sys.argv[1]), sys.argv[2]
try:
    importlib.import_module("warpalign._backends.cuda.traceback").END_ROWS = r
except AttributeError:
    sys.exit("this tree has no END_ROWS")
sys.argv = [script] + sys.argv[3:]
sys.path.insert(0, str(__import__("pathlib").Path(script).resolve().parent))
runpy.run_path(script, run_name="__main__")
