// counterpoint/index (internal, for tests): hooks between the steps of DocumentIndex::save and
// DocumentIndex::load, so that a test interleaves a save with a load deterministically (a load
// run at each step of a save, a save run in the middle of a load) instead of racing processes.
#pragma once

#include <functional>
#include <string>

namespace counterpoint::index::storage_testing {

enum class StorageStep {
  kSaveWritten,         // the new index is whole in its working directory, not yet in place
  kSaveSwapped,         // the new index is in place; the previous one is not yet removed
  kLoadDirectoryOpened,  // a load holds the index folder open and has opened no file in it yet
  kLoadSectionsOpened,   // a load holds header.json and every section file open, and has read none
  kLoadHeaderRead,       // a load has read and verified header.json
};

// Called with the index directory at each step; an empty function removes the hook. Not
// synchronised: for single-threaded tests only.
void set_storage_hook(std::function<void(StorageStep, const std::string&)> hook);
// Makes saves behave as on a file system without renameat2's RENAME_EXCHANGE, to test the
// version indirection used there.
void refuse_exchange(bool refuse);

}  // namespace counterpoint::index::storage_testing
