"""counterpoint's stage-2 kernels on numpy arrays: values against numpy references, shapes,
zero-copy inputs and the errors bad arrays raise."""
import pathlib
import sys

import numpy as np
import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp


def ref_cosine(q, C):
    return (C @ q) / (np.linalg.norm(C, axis=1) * np.linalg.norm(q))


def ref_hoyer(x):
    d = x.shape[-1]
    l1 = max(np.abs(x).sum(), np.sqrt(d) * 1e-6)
    l2 = max(np.linalg.norm(x), 1e-6)
    return (np.sqrt(d) - l1 / l2) / (np.sqrt(d) - 1)


def ref_l2_l1(x):
    d = x.shape[-1]
    return max(np.linalg.norm(x), 1e-6) / max(np.abs(x).sum(), np.sqrt(d) * 1e-6)


def ref_kappa4(x):
    l2 = max(np.linalg.norm(x), 1e-6)
    return (x ** 4).sum() / l2 ** 4


@pytest.fixture
def vectors():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 16)).astype(np.float32), rng.standard_normal((5, 16)).astype(np.float32)


def test_version_is_the_library_version():
    assert cp.__version__ == "0.1.0"


def test_cosine_matches_numpy_for_one_and_many_queries(vectors):
    Q, C = vectors
    one = cp.cosine(Q[0], C)
    assert one.shape == (5,) and one.dtype == np.float32
    np.testing.assert_allclose(one, ref_cosine(Q[0].astype(np.float64), C.astype(np.float64)), atol=1e-5)
    many = cp.cosine(Q, C)
    assert many.shape == (3, 5)
    for i in range(3):
        np.testing.assert_allclose(many[i], ref_cosine(Q[i].astype(np.float64), C.astype(np.float64)), atol=1e-5)


@pytest.mark.parametrize("kernel, reference", [(cp.hoyer, ref_hoyer), (cp.l2_l1, ref_l2_l1),
                                               (cp.kappa4, ref_kappa4)])
def test_sparsity_kernels_match_numpy(vectors, kernel, reference):
    Q, C = vectors
    result = kernel(Q, C)
    assert result.shape == (3, 5) and result.dtype == np.float32
    expected = np.array([[reference(Q[i].astype(np.float64) - C[j].astype(np.float64)) for j in range(5)]
                         for i in range(3)])
    np.testing.assert_allclose(result, expected, atol=1e-5)
    np.testing.assert_allclose(kernel(Q[1], C), expected[1], atol=1e-5)


def test_hoyer_of_a_one_hot_difference_is_one_and_of_a_flat_difference_is_zero():
    q = np.zeros(4, np.float32)
    C = np.array([[1, 0, 0, 0], [1, 1, 1, 1]], np.float32)
    np.testing.assert_allclose(cp.hoyer(q, C), [1.0, 0.0], atol=1e-6)


def test_identical_guard_is_opt_in_for_kernels():
    q = np.array([0.6, 0.8, 0.0], np.float32)
    C = np.stack([q, np.array([1, 0, 0], np.float32)])
    assert cp.hoyer(q, C)[0] == pytest.approx(0.0, abs=1e-6)
    assert cp.hoyer(q, C, guard=True)[0] == pytest.approx(-1e9)
    assert cp.hoyer(q, C, guard=True)[1] == pytest.approx(cp.hoyer(q, C)[1])


def test_other_numeric_dtypes_and_lists_are_converted(vectors):
    Q, C = vectors
    np.testing.assert_allclose(cp.cosine(Q.astype(np.float64), C.tolist()), cp.cosine(Q, C), atol=1e-6)
    np.testing.assert_allclose(cp.cosine(np.asfortranarray(Q), C), cp.cosine(Q, C), atol=1e-6)
    assert cp.cosine(np.array([1, 0], np.int64), np.array([[2, 0], [0, 3]], np.int32)).tolist() == [1.0, 0.0]


def test_results_own_their_memory(vectors):
    Q, C = vectors
    result = cp.cosine(Q, C)
    assert result.flags["C_CONTIGUOUS"] and result.base is not None
    del Q, C
    assert np.isfinite(result).all()


def test_non_numeric_dtype_raises_type_error(vectors):
    _, C = vectors
    with pytest.raises(TypeError, match="q must be a numeric"):
        cp.cosine(np.array(["a", "b"]), C)
    with pytest.raises(TypeError, match="C must be a numeric"):
        cp.hoyer(np.zeros(16, np.float32), np.array([[object()] * 16]))


def test_wrong_shapes_raise_value_error_naming_the_expected_shape(vectors):
    Q, C = vectors
    with pytest.raises(ValueError, match=r"q must have shape \(d,\) or \(n, d\) \(float32\), got shape \(1, 3, 16\)"):
        cp.cosine(Q[None], C)
    with pytest.raises(ValueError, match=r"C must have shape \(m, d\)"):
        cp.cosine(Q, C[0])
    with pytest.raises(ValueError):  # width mismatch, reported by the library
        cp.kappa4(Q[:, :8], C)


def test_nan_and_inf_raise_value_error(vectors):
    Q, C = vectors
    Q = Q.copy()
    Q[0, 0] = np.nan
    with pytest.raises(ValueError):
        cp.cosine(Q, C)
    C = C.copy()
    C[2, 3] = np.inf
    with pytest.raises(ValueError):
        cp.hoyer(np.zeros(16, np.float32), C)


def test_token_map_and_its_reductions():
    Qt = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    Ct = np.array([[1, 0], [0, 2]], np.float32)
    M = cp.token_map(Qt, Ct)
    s = 1 / np.sqrt(2)
    np.testing.assert_allclose(M, [[1, 0], [0, 1], [s, s]], atol=1e-6)
    assert cp.maxsim(Qt, Ct) == pytest.approx((1 + 1 + s) / 3, abs=1e-6)
    assert cp.map_maxsim(M) == pytest.approx((1 + 1 + s) / 3, abs=1e-6)
    assert cp.map_mean(M) == pytest.approx((2 + 2 * s) / 6, abs=1e-6)


def test_map_alignment_matches_numpy():
    M = np.array([[0.9, 0.1, -0.2], [0.3, 0.8, 0.4]], np.float32)
    lam, tau = 0.1, 0.1
    i, j = np.indices(M.shape)
    logits = (M.astype(np.float64) - lam * np.abs(i - j)) / tau
    A = np.exp(logits - logits.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    assert cp.map_alignment(M) == pytest.approx(float((A * M).sum(axis=1).mean()), abs=1e-5)
    with pytest.raises(ValueError):
        cp.map_alignment(M, tau=0.0)


def test_token_kernels_reject_bad_input():
    with pytest.raises(ValueError, match=r"Qt must have shape \(tq, d\)"):
        cp.token_map(np.zeros(3, np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError):
        cp.token_map(np.zeros((0, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError):
        cp.maxsim(np.ones((2, 3), np.float32), np.ones((2, 4), np.float32))
