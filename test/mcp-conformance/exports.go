//go:build wasip1

package main

import (
	"errors"

	"github.com/extism/go-pdk"
)

// call runs one tool over the Extism input and sets the output or the
// error. The return value is the Extism status: 0 success, 1 failure.
func call(tool func([]byte) ([]byte, error)) int32 {
	out, err := tool(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.Output(out)
	return 0
}

//go:wasmexport test_simple_text
func testSimpleText() int32 {
	return call(func([]byte) ([]byte, error) { return []byte(simpleText), nil })
}

//go:wasmexport test_error_handling
func testErrorHandling() int32 {
	return call(func([]byte) ([]byte, error) { return nil, errors.New(errorText) })
}

//go:wasmexport json_schema_2020_12_tool
func jsonSchemaTool() int32 {
	return call(func(in []byte) ([]byte, error) { return in, nil })
}

//go:wasmexport test_image_content
func testImageContent() int32 { return call(imageContent) }

//go:wasmexport test_audio_content
func testAudioContent() int32 { return call(audioContent) }

//go:wasmexport test_embedded_resource
func testEmbeddedResource() int32 { return call(embeddedResource) }

//go:wasmexport test_multiple_content_types
func testMultipleContentTypes() int32 { return call(multipleContentTypes) }
