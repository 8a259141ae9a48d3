/* layout — byte positions of the fixed-size structures of specs/format.md.
 * All integers little-endian. Kept in one place so the writer, the reader
 * and the spec cannot drift apart silently (tests/unit/layout checks). */
#ifndef TPP_LAYOUT_H
#define TPP_LAYOUT_H

#define FILE_MAGIC "\x89TPP\r\n\x1a\n"
#define FILE_HDR_FIXED 20    /* magic[8] major u16 minor u16 cbor_len u32 crc u32 */
#define FILE_HDR_CBOR_MAX (16u << 20)

#define CHUNK_MAGIC "TPCK"
#define CHUNK_HDR_SIZE 48
#define CHUNK_HDR_MAX 4096   /* readers accept headers up to this size (newer minors) */
/* offsets inside a chunk header */
#define CH_MAGIC 0
#define CH_KIND 4
#define CH_FLAGS 5
#define CH_HSIZE 6
#define CH_STREAM 8
#define CH_COUNT 12
#define CH_MINTS 16
#define CH_MAXTS 24
#define CH_RAW 32
#define CH_STORED 36
#define CH_PCRC 40
/* the header CRC is the last 4 bytes of the header, over all bytes before it */
#define CHUNK_F_LZ4 1u
#define CHUNK_F_TS_SORTED 2u /* events chunk: timestamps never go backwards */

#define TRAILER_SIZE 40
#define TRAILER_MAGIC "TPPEND\r\n"
/* offsets inside the trailer */
#define TR_INDEX 0
#define TR_EVENTS 8
#define TR_NCHUNKS 16
#define TR_CRC 24
#define TR_MAGIC 32

#define STREAM_NONE 0xffffffffu /* stream id of metadata and index chunks */

#endif
