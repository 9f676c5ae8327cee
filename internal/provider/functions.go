package provider

import "github.com/hashicorp/terraform-plugin-framework/function"

// functions lists the provider-defined functions (pure topology maths).
func functions() []func() function.Function {
	return nil
}
