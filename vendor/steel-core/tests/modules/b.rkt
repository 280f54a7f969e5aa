(provide b)

(define (b x) (+ x 27))
(define (c x) (+ x 350))
(define (b-private) "hi this is a private function change this part")