use super::ast::ExprKind;

/// AST-IR Builder
pub struct AstBuilder {
    _program: Vec<ExprKind>,
}

impl AstBuilder {}
