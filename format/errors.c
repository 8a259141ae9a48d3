/* Error names for the format's own codes and errno values. */
#include <string.h>
#include "tpp_format.h"

const char *tpp_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case TPP_EBADFILE: return "not a tracepp file, or damaged";
	case TPP_EVERSION: return "written by a newer, incompatible format version";
	case TPP_ECHECKSUM: return "checksum mismatch";
	case TPP_ETRUNC: return "file is truncated";
	case TPP_ENOTOURS: return "exists and is not a regular file of yours: not replaced";
	default: return strerror(err);
	}
}
