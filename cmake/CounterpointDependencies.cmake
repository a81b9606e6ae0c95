# Every dependency comes from a Debian package; scripts/setup.sh installs them.
find_package(OpenMP REQUIRED)          # must precede faiss: its config expects OpenMP::OpenMP_CXX
find_package(faiss REQUIRED)
include(CounterpointTorch)         # Debian's libtorch, or the target Python's torch for pip install
find_package(Eigen3 REQUIRED NO_MODULE)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(Threads REQUIRED)

find_library(UTF8PROC_LIBRARY NAMES utf8proc REQUIRED)
find_path(UTF8PROC_INCLUDE_DIR utf8proc.h REQUIRED)
add_library(utf8proc UNKNOWN IMPORTED)
set_target_properties(utf8proc PROPERTIES IMPORTED_LOCATION ${UTF8PROC_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${UTF8PROC_INCLUDE_DIR})

find_library(STEMMER_LIBRARY NAMES stemmer REQUIRED)
find_path(STEMMER_INCLUDE_DIR libstemmer.h REQUIRED)
add_library(stemmer UNKNOWN IMPORTED)
set_target_properties(stemmer PROPERTIES IMPORTED_LOCATION ${STEMMER_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${STEMMER_INCLUDE_DIR})

# WordNet (Debian: wordnet-dev; the database itself is wordnet-base): antonyms for text/inversion.
find_library(WORDNET_LIBRARY NAMES wordnet-3.0 wordnet REQUIRED)
find_path(WORDNET_INCLUDE_DIR wn.h REQUIRED)
add_library(wordnet UNKNOWN IMPORTED)
set_target_properties(wordnet PROPERTIES IMPORTED_LOCATION ${WORDNET_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${WORDNET_INCLUDE_DIR})

find_library(SENTENCEPIECE_LIBRARY NAMES sentencepiece REQUIRED)
