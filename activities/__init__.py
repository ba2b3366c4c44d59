"""Activities: decode the JSON input, call one library function, encode the result."""
