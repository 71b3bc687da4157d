#ifndef LFSIM_FILE_ERROR_H
#define LFSIM_FILE_ERROR_H

#include <stdexcept>
#include <string>

namespace lfsim
{

/// A file of the run's output could not be written (a full disk, a file size limit): the
/// Python module raises it as OSError(err, strerror, path).
struct FileError : std::runtime_error
{
    FileError(int e, const std::string& p)
        : std::runtime_error(p)
        , err(e)
        , path(p)
    {
    }

    int err;
    std::string path;
};

} // namespace lfsim

#endif
