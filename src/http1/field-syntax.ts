/** The HTTP field syntax (RFC 9110 §5) both request heads and response heads are checked against. */

/** A token: a method or a field name. */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A character no field value may hold (a control character other than tab). */
export const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
