"""What a short command imports: the start-up cuts keep their behaviour (benchmarks/startup.py measures them)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from smtlib.bleu.stats import BleuSettings, TokenizerChoices, tokenizers
from smtlib.errors import InputError


def _python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_tokenizer_choices_are_sacrebleus():
    choices = TokenizerChoices()
    assert list(choices) == list(tokenizers()) and len(choices) == len(tokenizers())
    assert "none" in choices and "13a" in choices and "intl" in choices
    assert "13b" not in choices and None not in choices


def test_unknown_tokenizer_still_refused():
    with pytest.raises(InputError, match="unknown tokenizer"):
        BleuSettings(tokenize="13b")


def test_none_tokenizer_and_signature_without_sacrebleu():
    """``--tokenize none`` and the signature's version are read without importing sacrebleu."""
    out = _python(
        "import sys\n"
        "from smtlib.cli import build_parser\n"
        "from smtlib.bleu.signature import BleuSignature\n"
        "from smtlib.bleu.stats import BleuSettings\n"
        "args = build_parser('bleu', ['bleu']).parse_args(['bleu', '--refs', 'r', '--hyps', 'h', '--tokenize', 'none'])\n"
        "sig = str(BleuSignature(BleuSettings(tokenize=args.tokenize), 1))\n"
        "print('sacrebleu' in sys.modules, sig.split('version:')[1].split('|')[0])\n")
    loaded, version = out.split()
    import sacrebleu

    assert loaded == "False"
    assert version == sacrebleu.__version__


def test_numba_start_up_hides_cffi_only_from_numba():
    """After :func:`load_numba_implementations`, kernels run, numba's cffi typing is off, cffi imports."""
    out = _python(
        "import sys, numba, numpy as np\n"
        "from smtlib.numba_startup import load_numba_implementations\n"
        "load_numba_implementations()\n"
        "import numba.core.typing.cffi_utils as c\n"
        "f = numba.njit(lambda a: np.sum(a) * 2.0)\n"
        "r = f(np.arange(4.0))\n"
        "print('scipy.linalg' in sys.modules, c.SUPPORTED, r)\n"
        "import cffi\n"
        "print(cffi.FFI is not None)\n")
    assert out.splitlines() == ["False False 12.0", "True"]


def _scipy_imports_f2py() -> bool:
    """Whether this scipy's first import loads numpy.f2py (scipy's array-API copy of NumPy's namespace)."""
    return _python("import sys, scipy.sparse\nprint('numpy.f2py.crackfortran' in sys.modules)") == "True"


def test_scipy_import_leaves_numpys_f2py_and_testing_unloaded_until_used():
    """With :func:`defer_until_scipy`, importing scipy loads neither f2py nor numpy.testing; both work
    in full on first use."""
    if not _scipy_imports_f2py():
        pytest.skip("this scipy does not import numpy.f2py: nothing to defer")
    out = _python(
        "import sys\n"
        "from smtlib.numpy_startup import defer_until_scipy\n"
        "defer_until_scipy()\n"
        "defer_until_scipy()\n"
        "import scipy.sparse\n"
        "from smtlib.numpy_startup import _BeforeScipy\n"
        "print(sum(isinstance(f, _BeforeScipy) for f in sys.meta_path), 'numpy.f2py.crackfortran' in sys.modules, "
        "'numpy.testing._private' in sys.modules)\n"
        "import numpy, numpy.testing as nt\n"
        "nt.assert_array_equal(numpy.arange(3), [0, 1, 2])\n"
        "print('numpy.testing._private' in sys.modules, callable(numpy.f2py.run_main))\n")
    assert out.splitlines() == ["0 False False", "True True"]


def test_a_command_does_not_import_numpy_for_the_deferral():
    """``smtlib weights``, which does not use numpy, does not import it because of the deferral."""
    out = _python(
        "import sys\n"
        "from smtlib.cli import main\n"
        "main(['weights', '--help'])\n"
        "print('numpy' in sys.modules)\n")
    assert out.splitlines()[-1] == "False"


def test_the_deferral_skips_no_other_finder_of_scipys_import():
    """The finder that defers steps aside without hiding the finder after it from scipy's import."""
    out = _python(
        "import sys\n"
        "from smtlib.numpy_startup import defer_until_scipy\n"
        "asked = []\n"
        "class Recorder:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        asked.append(name)\n"
        "defer_until_scipy()\n"
        "sys.meta_path.insert(1, Recorder())\n"
        "import scipy\n"
        "print('scipy' in asked)\n")
    assert out == "True"
